//! Activity: the execution log. Every call, denied and failed ones
//! included, with filters, full-text search, details, JSON Lines export and
//! clearing behind a confirmation.

use hearth_core::skill::activity::{ActivityFilter, ActivityRecord, export_jsonl};
use hearth_core::{SkillId, ToolStatus};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::activity::{Watched, matching};
use crate::icons::Icon;
use crate::platform::{download_text, format_time};
use crate::runtime::use_runtime;
use crate::shared::confirm::ConfirmDialog;
use crate::shared::modal::Modal;
use crate::views::cards::{record_input, record_output};

const PERIODS: [(&str, &str, f64); 4] = [
    ("all", "All time", 0.0),
    ("hour", "Last hour", 3_600_000.0),
    ("day", "Last 24 hours", 86_400_000.0),
    ("week", "Last 7 days", 604_800_000.0),
];

fn decision_text(r: &ActivityRecord) -> String {
    match &r.result.decision {
        Some(d) => {
            let outcome = match d.outcome {
                hearth_core::skill::permission::Verdict::Allowed => "allowed",
                hearth_core::skill::permission::Verdict::Denied => "denied",
            };
            format!("{outcome} by {}", d.by.as_str())
        }
        None => "—".into(),
    }
}

/// What "Clear the log" deletes, and what it leaves, in so many words.
fn clear_message(records: usize) -> String {
    format!(
        "This deletes {} of past skill calls: who ran what, with which input, \
         what came back and who allowed it. Conversations keep their messages, \
         commands and results, so every chat stays whole; notes, tasks, \
         memories, files, settings and the skills' use counts stay too.",
        hearth_core::util::display::count(records, "record", "records")
    )
}

#[component]
pub fn ActivityView() -> impl IntoView {
    let rt = use_runtime();
    let Watched { records, error } = rt.activity().watch();

    let skill = RwSignal::new(String::new());
    let status = RwSignal::new(String::new());
    let period = RwSignal::new("all".to_string());
    let text = RwSignal::new(String::new());
    let filter = Memo::new(move |_| ActivityFilter {
        skill: SkillId::new(skill.get()).ok(),
        status: ToolStatus::parse(&status.get()),
        since_ms: PERIODS
            .iter()
            .find(|p| p.0 == period.get())
            .filter(|p| p.2 > 0.0)
            .map(|p| js_sys::Date::now() - p.2),
        text: text.get(),
    });
    let shown = Memo::new(move |_| {
        let f = filter.get();
        records.with(|all| matching(all, &f))
    });
    let selected: RwSignal<Option<ActivityRecord>> = RwSignal::new(None);
    let confirming = RwSignal::new(false);
    let notice: RwSignal<Option<String>> = RwSignal::new(None);

    let skills: Vec<(String, String)> = rt
        .registry()
        .iter()
        .map(|s| (s.id.to_string(), s.name.clone()))
        .collect();

    let export = move |_| {
        let list = shown.get_untracked();
        let text = export_jsonl(&list);
        let name = format!(
            "hearth-activity-{}.jsonl",
            js_sys::Date::new_0()
                .to_iso_string()
                .as_string()
                .unwrap_or_default()
                .replace(':', "-")
        );
        match download_text(&name, "application/x-ndjson", &text) {
            Ok(()) => notice.set(Some(format!(
                "Exported {}.",
                hearth_core::util::display::count(list.len(), "record", "records")
            ))),
            Err(e) => notice.set(Some(format!("Export failed: {e}"))),
        }
    };
    let clear = {
        let rt = rt.clone();
        move || {
            let activity = rt.activity();
            spawn_local(async move {
                match activity.clear().await {
                    Ok(()) => {
                        notice.set(Some("The activity log was cleared.".into()));
                    }
                    Err(e) => notice.set(Some(format!("Nothing was cleared: {e}"))),
                }
                confirming.set(false);
            });
        }
    };

    view! {
        <section class="page activity" aria-labelledby="activity-title">
            <header class="page-head row">
                <div>
                    <h1 id="activity-title">"Activity"</h1>
                    <p class="muted">"Every skill call, with what went in, what came out, and who decided."</p>
                </div>
                <div class="actions">
                    <button on:click=export disabled=move || shown.with(Vec::is_empty)>
                        {move || format!("Export {} as JSON Lines", shown.with(Vec::len))}
                    </button>
                    <button class="danger-outline" on:click=move |_| confirming.set(true) disabled=move || records.with(Vec::is_empty)>
                        "Clear…"
                    </button>
                </div>
            </header>
            <div class="filters" role="search">
                <input
                    type="search"
                    placeholder="Search arguments and results"
                    aria-label="Search activity"
                    prop:value=move || text.get()
                    on:input=move |ev| text.set(event_target_value(&ev))
                />
                <select aria-label="Skill" on:change=move |ev| skill.set(event_target_value(&ev))>
                    <option value="">"All skills"</option>
                    {skills.into_iter().map(|(id, name)| view! { <option value=id>{name}</option> }).collect_view()}
                </select>
                <select aria-label="Status" on:change=move |ev| status.set(event_target_value(&ev))>
                    <option value="">"Any status"</option>
                    {ToolStatus::ALL.iter().map(|s| view! { <option value=s.as_str()>{s.as_str()}</option> }).collect_view()}
                </select>
                <select aria-label="Time" on:change=move |ev| period.set(event_target_value(&ev))>
                    {PERIODS.iter().map(|(v, label, _)| view! { <option value=*v>{*label}</option> }).collect_view()}
                </select>
            </div>
            <Show when=move || notice.get().is_some()>
                <p class="notice" role="status">{move || notice.get().unwrap_or_default()}</p>
            </Show>
            <Show when=move || error.get().is_some()>
                <p class="error" role="alert">{move || error.get().unwrap_or_default()}</p>
            </Show>
            <Show
                when=move || !shown.with(Vec::is_empty)
                fallback=move || view! {
                    <div class="empty-state small">
                        {move || if records.with(Vec::is_empty) {
                            "Nothing has run yet. Skills you or the assistant run will show up here."
                        } else {
                            "No activity matches these filters."
                        }}
                    </div>
                }
            >
                <table class="log">
                    <thead>
                        <tr><th>"Time"</th><th>"Skill"</th><th>"Status"</th><th>"Decision"</th><th>"Duration"</th><th>"Input"</th></tr>
                    </thead>
                    <tbody>
                        <For
                            each=move || shown.get()
                            key=|r| r.id.clone()
                            children=move |r| {
                                let row = r.clone();
                                let input = serde_json::to_string(&r.arguments).unwrap_or_default();
                                let preview: String = input.chars().take(80).collect();
                                view! {
                                    <tr class="log-row" data-status=r.result.status.as_str() data-origin=r.origin.who().to_string() data-agent=r.origin.agent().map(|a| a.name.clone()) tabindex="0"
                                        on:click=move |_| selected.set(Some(row.clone()))
                                        on:keydown={
                                            let row = r.clone();
                                            move |ev: leptos::ev::KeyboardEvent| if ev.key() == "Enter" { selected.set(Some(row.clone())) }
                                        }
                                    >
                                        <td>{format_time(r.result.started_at_ms)}</td>
                                        <td>{r.skill_name.clone()}{origin_tag(&r.origin)}</td>
                                        <td><span class=format!("status status-{}", r.result.status.as_str())>{r.result.status.as_str()}</span></td>
                                        <td class="muted">{decision_text(&r)}</td>
                                        <td class="muted">
                                            {hearth_core::util::display::duration(r.result.duration_ms)}
                                            {hearth_core::util::display::approval_wait(r.result.wait_ms).map(|w| view! { <span class="log-wait">{w}</span> })}
                                        </td>
                                        <td><code class="truncate">{preview}</code></td>
                                    </tr>
                                }
                            }
                        />
                    </tbody>
                </table>
            </Show>
            {move || selected.get().map(|r| view! { <ActivityDetail record=r on_close=move || selected.set(None)/> })}
            <Show when=move || confirming.get()>
                <ConfirmDialog
                    title="Clear the activity log?".to_string()
                    message=clear_message(records.with_untracked(Vec::len))
                    confirm_label="Clear the log".to_string()
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

#[component]
fn ActivityDetail(
    record: ActivityRecord,
    on_close: impl Fn() + Copy + Send + Sync + 'static,
) -> impl IntoView {
    // What came out, in words, comes first; the stored record (ids and
    // all) only when asked for.
    let raw = serde_json::to_string_pretty(&record).unwrap_or_default();
    let completed = record.result.status == ToolStatus::Completed;
    let started = js_sys::Date::new(&record.result.started_at_ms.into())
        .to_locale_string("default", &wasm_bindgen::JsValue::UNDEFINED)
        .as_string()
        .unwrap_or_default();
    let wait = hearth_core::util::display::approval_wait(record.result.wait_ms);
    view! {
        <Modal labelledby="detail-title" class="wide activity-detail" on_escape=Callback::new(move |_| on_close())>
                <header class="approval-head">
                    <h2 id="detail-title">{record.skill_name.clone()}</h2>
                    <span class=format!("status status-{}", record.result.status.as_str())>{record.result.status.as_str()}</span>
                    <button class="icon-button" aria-label="Close" data-autofocus on:click=move |_| on_close()><Icon name="x"/></button>
                </header>
                <section class="detail-output" aria-labelledby="detail-output-title">
                    <h3 id="detail-output-title">{if completed { "Output" } else { "Message" }}</h3>
                    {record_output(&record)}
                </section>
                <dl class="facts">
                    <dt>"Started"</dt><dd>{started}</dd>
                    <dt>"Ran for"</dt><dd data-testid="activity-duration">{hearth_core::util::display::duration(record.result.duration_ms)}</dd>
                    {wait.map(|w| view! { <dt>"Approval"</dt><dd data-testid="activity-wait">{w}</dd> })}
                    <dt>"Decision"</dt><dd>{decision_text(&record)}{record.result.decision.as_ref().and_then(|d| d.reason.clone()).map(|r| format!(" — {r}"))}</dd>
                    <dt>"From"</dt><dd data-testid="activity-origin">{origin_words(&record)}</dd>
                </dl>
                <h3>"Input"</h3>
                {record_input(&record)}
                <details class="raw-record">
                    <summary>"Show the log record"</summary>
                    <pre class="approval-args" aria-label="The log record as stored">{raw}</pre>
                </details>
        </Modal>
    }
}

/// Who made a call, for the log: an MCP App is named with its server,
/// an agent by its name.
fn origin_words(record: &ActivityRecord) -> String {
    match (&record.origin, record.skill_id.as_str().split_once("__")) {
        (hearth_core::CallOrigin::App, Some((server, _))) => {
            format!("an MCP App of the server {server}")
        }
        (hearth_core::CallOrigin::Agent(agent), _) => {
            format!("{}, an agent you connected", agent.name)
        }
        (origin, _) => origin.who().to_string(),
    }
}

/// The tag after a skill's name in the log, for calls the person did not
/// make from Hearth itself.
fn origin_tag(origin: &hearth_core::CallOrigin) -> Option<impl IntoView + use<>> {
    let text = match origin {
        hearth_core::CallOrigin::App => " from an app".to_string(),
        hearth_core::CallOrigin::Agent(agent) => format!(" from {}", agent.name),
        hearth_core::CallOrigin::User | hearth_core::CallOrigin::Model => return None,
    };
    Some(view! { <span class="origin-tag">{text}</span> })
}
