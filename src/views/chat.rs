//! Chat: the message list and the composer, which doubles as a command bar.

use hearth_core::activity::ActivityRecord;
use hearth_core::command;
use hearth_core::{CallOrigin, SkillDefinition};
use leptos::ev::KeyboardEvent;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::icons::Icon;
use crate::runtime::use_runtime;
use crate::storage::ACTIVITY;
use crate::views::attach::{AttachButton, AttachmentList, Attachments, use_attachments};
use crate::views::card::ResultCard;

const EXAMPLES: [&str; 3] = [
    "/calc 15% of 847",
    "/calc 5 miles to km",
    "/calc today + 90 days",
];

#[component]
pub fn ChatView() -> impl IntoView {
    let rt = use_runtime();
    let records: RwSignal<Vec<ActivityRecord>> = RwSignal::new(Vec::new());
    let loaded = RwSignal::new(false);
    let load_error: RwSignal<Option<String>> = RwSignal::new(None);

    {
        let db = rt.db();
        spawn_local(async move {
            match db.all::<ActivityRecord>(ACTIVITY).await {
                Ok((mut list, _)) => {
                    list.sort_by(|a, b| a.result.started_at_ms.total_cmp(&b.result.started_at_ms));
                    records.set(list);
                }
                Err(e) => load_error.set(Some(e.to_string())),
            }
            loaded.set(true);
        });
    }

    let icons = {
        let registry = rt.registry();
        let pairs: Vec<(String, String)> = registry
            .iter()
            .map(|s| (s.id.to_string(), s.icon.clone()))
            .collect();
        StoredValue::new(pairs)
    };
    let icon_for = move |id: &str| {
        icons.with_value(|pairs| {
            pairs
                .iter()
                .find(|(k, _)| k == id)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        })
    };

    let on_result = move |record: ActivityRecord| records.update(|list| list.push(record));
    // Files attached or dropped here go to the next code run.
    let attachments = Attachments::default();
    provide_context(attachments);
    let on_undo = {
        let rt = rt.clone();
        Callback::new(move |undo: hearth_core::call::UndoAction| {
            let rt = rt.clone();
            spawn_local(async move {
                let skill = rt.registry().get(&undo.skill_id).cloned();
                let (call, result) = rt.undo(undo).await;
                on_result(ActivityRecord::new(&call, skill.as_ref(), &result));
            });
        })
    };

    view! {
        <section
            class="chat"
            aria-label="Chat"
            class:dragging=move || attachments.dragging()
            on:dragover=attachments.on_drag_over()
            on:dragleave=attachments.on_drag_leave()
            on:drop=attachments.on_drop()
        >
            <div class="timeline" aria-live="polite">
                <Show when=move || load_error.get().is_some()>
                    <p class="error" role="alert">{move || load_error.get().unwrap_or_default()}</p>
                </Show>
                <Show when=move || loaded.get() && records.with(Vec::is_empty)>
                    <EmptyChat/>
                </Show>
                <For
                    each=move || records.get()
                    key=|r| r.id.clone()
                    children=move |r| {
                        let icon = icon_for(r.skill_id.as_str());
                        view! { <ResultCard record=r icon=icon on_undo=on_undo/> }
                    }
                />
            </div>
            <crate::views::code::PythonStatus/>
            <Composer on_result=on_result/>
        </section>
    }
}

#[component]
fn EmptyChat() -> impl IntoView {
    view! {
        <div class="empty-state">
            <h2>"Run a skill"</h2>
            <p>"No model is set up yet, so the composer works as a command bar. Type "<kbd>"/"</kbd>" and a skill's name, then its input."</p>
            <ul class="examples">
                {EXAMPLES.iter().map(|e| view! { <li><code>{*e}</code></li> }).collect_view()}
            </ul>
        </div>
    }
}

/// Skills whose id or name starts with what follows the slash.
fn suggestions(skills: &[SkillDefinition], text: &str) -> Vec<(String, String, String)> {
    let Some(partial) = text.strip_prefix('/') else {
        return Vec::new();
    };
    if partial.contains(char::is_whitespace) {
        return Vec::new();
    }
    let partial = partial.to_lowercase();
    skills
        .iter()
        .filter(|s| {
            s.id.as_str().starts_with(&partial) || s.name.to_lowercase().starts_with(&partial)
        })
        .take(8)
        .map(|s| (s.id.to_string(), s.name.clone(), s.icon.clone()))
        .collect()
}

#[component]
fn Composer(on_result: impl Fn(ActivityRecord) + Copy + 'static) -> impl IntoView {
    let rt = use_runtime();
    let attachments = use_attachments();
    let text = RwSignal::new(String::new());
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    let busy = RwSignal::new(false);
    let selected = RwSignal::new(0usize);
    let skills = StoredValue::new(rt.registry().iter().cloned().collect::<Vec<_>>());
    let matches = Memo::new(move |_| skills.with_value(|s| suggestions(s, &text.get())));

    let submit = {
        let rt = rt.clone();
        move || {
            let line = text.get_untracked();
            if line.trim().is_empty() || busy.get_untracked() {
                return;
            }
            let parsed = match command::parse(&line) {
                Ok(Some(p)) => p,
                Ok(None) => {
                    error.set(Some(
                        "No model is set up yet, so only commands run. Start with '/', e.g. /calc 15% of 847".into(),
                    ));
                    return;
                }
                Err(e) => {
                    error.set(Some(e.to_string()));
                    return;
                }
            };
            let prepared = {
                let registry = rt.registry();
                command::resolve(&registry, &parsed.name).and_then(|skill| {
                    command::arguments(skill, &parsed.input).map(|args| (skill.clone(), args))
                })
            };
            let (skill, args) = match prepared {
                Ok(p) => p,
                Err(e) => {
                    error.set(Some(e.to_string()));
                    return;
                }
            };
            let (args, handed) = attachments.hand_to(skill.id.as_str(), args);
            if handed {
                attachments.spent();
            }
            error.set(None);
            busy.set(true);
            let rt = rt.clone();
            spawn_local(async move {
                let (call, result) = rt.invoke(skill.id.clone(), args, CallOrigin::User).await;
                on_result(ActivityRecord::new(&call, Some(&skill), &result));
                text.set(String::new());
                busy.set(false);
            });
        }
    };

    let complete = move |id: String| {
        text.set(format!("/{id} "));
        selected.set(0);
    };

    let on_keydown = {
        let submit = submit.clone();
        move |ev: KeyboardEvent| {
            let options = matches.get_untracked();
            match ev.key().as_str() {
                "ArrowDown" if !options.is_empty() => {
                    ev.prevent_default();
                    selected.update(|i| *i = (*i + 1) % options.len());
                }
                "ArrowUp" if !options.is_empty() => {
                    ev.prevent_default();
                    selected.update(|i| *i = (*i + options.len() - 1) % options.len());
                }
                "Tab" if !options.is_empty() => {
                    ev.prevent_default();
                    let i = selected.get_untracked().min(options.len() - 1);
                    complete(options[i].0.clone());
                }
                "Escape" => error.set(None),
                "Enter" if !ev.shift_key() => {
                    ev.prevent_default();
                    // Enter on a bare "/ca" picks the highlighted skill.
                    if !options.is_empty() && !text.get_untracked().contains(' ') {
                        let i = selected.get_untracked().min(options.len() - 1);
                        complete(options[i].0.clone());
                    } else {
                        submit();
                    }
                }
                _ => {}
            }
        }
    };

    view! {
        <form class="composer" on:submit={
            let submit = submit.clone();
            move |ev: leptos::ev::SubmitEvent| {
                ev.prevent_default();
                submit();
            }
        }>
            <Show when=move || !matches.with(Vec::is_empty)>
                <ul class="suggestions" role="listbox" aria-label="Skills">
                    {move || {
                        matches
                            .get()
                            .into_iter()
                            .enumerate()
                            .map(|(i, (id, name, icon))| {
                                let pick = id.clone();
                                view! {
                                    <li
                                        role="option"
                                        aria-selected=move || (selected.get() == i).to_string()
                                        class:selected=move || selected.get() == i
                                        on:mousedown=move |ev| {
                                            ev.prevent_default();
                                            complete(pick.clone());
                                        }
                                    >
                                        <Icon name=icon/>
                                        <code>"/"{id}</code>
                                        <span class="muted">{name}</span>
                                    </li>
                                }
                            })
                            .collect_view()
                    }}
                </ul>
            </Show>
            <AttachmentList/>
            <div class="composer-row">
                <AttachButton/>
                <textarea
                    class="composer-input"
                    rows="1"
                    placeholder="Type / to run a skill, e.g. /calc 15% of 847"
                    aria-label="Message or command"
                    prop:value=move || text.get()
                    on:input=move |ev| {
                        text.set(event_target_value(&ev));
                        selected.set(0);
                        error.set(None);
                    }
                    on:keydown=on_keydown
                ></textarea>
                <button type="submit" class="primary" disabled=move || busy.get()>"Run"</button>
            </div>
            <Show when=move || error.get().is_some()>
                <p class="inline-error" role="alert">{move || error.get().unwrap_or_default()}</p>
            </Show>
            <p class="hint">
                <kbd>"Enter"</kbd>" runs · "<kbd>"Shift"</kbd>"+"<kbd>"Enter"</kbd>" new line · "<kbd>"Tab"</kbd>" completes"
            </p>
        </form>
    }
}
