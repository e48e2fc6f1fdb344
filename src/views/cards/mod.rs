//! Result cards: which skill ran, with what input, what came out, and
//! how long it took; each skill kind that shows more has its file here,
//! as does the artifact panel, which the chat and the notes both open.

pub mod artifact;
pub mod code;
pub mod enable;
pub mod web;

use hearth_core::assistant::agent::{CallState, ToolCallRecord};
use hearth_core::assistant::providers::ImagePart;
use hearth_core::builtin::artifacts::Artifact;
use hearth_core::skill::activity::ActivityRecord;
use hearth_core::skill::call::UndoAction;
use hearth_core::{Content, ToolStatus};
use leptos::prelude::*;
use leptos::task::spawn_local;
use send_wrapper::SendWrapper;
use serde_json::Value;

use crate::icons::Icon;
use crate::platform::format_time;
use crate::shared::picture::Picture;

/// The input as people read it: a lone string argument is shown bare,
/// anything else as formatted JSON.
fn input_text(arguments: &Value) -> String {
    match arguments.as_object() {
        Some(map) if map.len() == 1 => match map.values().next() {
            Some(Value::String(s)) => s.clone(),
            _ => pretty(arguments),
        },
        _ => pretty(arguments),
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

fn status_label(status: ToolStatus) -> &'static str {
    match status {
        ToolStatus::Completed => "Completed",
        ToolStatus::Failed => "Failed",
        ToolStatus::Denied => "Denied",
        ToolStatus::InputRequired => "Needs input",
    }
}

fn output_text(record: &ActivityRecord) -> String {
    result_text(&record.result)
}

/// What a logged call gave back, as people read it: code runs show their
/// output (`code`), web skills read as pages and result lists
/// (`web`), everything else as its text, or its message when it
/// did not complete.
pub fn record_output(record: &ActivityRecord) -> AnyView {
    let output = output_text(record);
    let shown = code::code_output(record)
        .or_else(|| web::web_result(record, &output))
        .unwrap_or_else(|| view! { <Output text=output/> }.into_any());
    let pictures = result_pictures(record);
    if pictures.is_empty() {
        return shown;
    }
    view! {
        {shown}
        <div class="result-pictures" aria-label="Pictures in the result">
            {pictures.into_iter().map(|part| view! { <Picture part=part class="result-picture"/> }).collect_view()}
        </div>
    }
    .into_any()
}

/// The pictures a result carries (an MCP tool's `image` content), each
/// described by the skill that gave it.
fn result_pictures(record: &ActivityRecord) -> Vec<ImagePart> {
    let images: Vec<(&str, &str)> = record
        .result
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Image { mime_type, data } if mime_type.starts_with("image/") => {
                Some((mime_type.as_str(), data.as_str()))
            }
            _ => None,
        })
        .collect();
    let many = images.len() > 1;
    images
        .into_iter()
        .enumerate()
        .map(|(i, (mime_type, data))| ImagePart {
            media_type: mime_type.to_string(),
            data: data.to_string(),
            alt: if many {
                format!("Picture {} from {}", i + 1, record.skill_id)
            } else {
                format!("Picture from {}", record.skill_id)
            },
            width: 0,
            height: 0,
        })
        .collect()
}

/// The input of a logged call as people read it: a code run's source, a
/// lone string bare, anything else as formatted JSON.
pub fn record_input(record: &ActivityRecord) -> AnyView {
    match code::code_input(record) {
        Some(view) => view,
        None => {
            view! { <Output text=input_text(&record.arguments) class="card-input"/> }.into_any()
        }
    }
}

/// What a result says, as people read it.
pub fn result_text(r: &hearth_core::ToolResult) -> String {
    match r.status {
        ToolStatus::Completed => {
            let texts: Vec<String> = r
                .content
                .iter()
                .filter_map(|c| match c {
                    Content::Text { text } => Some(text.clone()),
                    _ => None,
                })
                .collect();
            if texts.is_empty() {
                r.json().map(pretty).unwrap_or_default()
            } else {
                texts.join("\n")
            }
        }
        ToolStatus::Failed | ToolStatus::Denied | ToolStatus::InputRequired => {
            r.error.clone().unwrap_or_default()
        }
    }
}

/// Output longer than this is shown collapsed; it is always stored whole.
const COLLAPSE_LINES: usize = 12;
const COLLAPSE_CHARS: usize = 1_200;

/// Text in a `<pre>`, collapsed to a preview when long. It is always
/// stored whole; this only changes what is shown at first.
#[component]
pub fn Output(text: String, #[prop(default = "card-output")] class: &'static str) -> impl IntoView {
    let lines = text.lines().count();
    let chars = text.chars().count();
    if lines > COLLAPSE_LINES || chars > COLLAPSE_CHARS {
        let mut preview: String = text.lines().take(4).collect::<Vec<_>>().join("\n");
        if preview.chars().count() > 300 {
            preview = preview.chars().take(300).collect::<String>() + "…";
        }
        view! {
            <details class="collapsed-output">
                <summary>
                    <pre class=format!("{class} preview")>{preview}</pre>
                    <span class="muted">{format!("Show all ({lines} lines, {chars} characters)")}</span>
                </summary>
                <pre class=class>{text}</pre>
            </details>
        }
        .into_any()
    } else {
        view! { <pre class=class>{text}</pre> }.into_any()
    }
}

/// A button that puts `text` on the clipboard and says so for a moment.
#[component]
pub fn CopyButton(
    /// What is copied, read when the button is pressed.
    #[prop(into)]
    text: Signal<String>,
    /// What the button copies, for its name: "Copy the output".
    #[prop(default = "Copy")]
    label: &'static str,
) -> impl IntoView {
    let said: RwSignal<Option<&'static str>> = RwSignal::new(None);
    view! {
        <button
            type="button"
            class="small ghost copy-button"
            aria-label=label
            title=label
            on:click=move |_| {
                let Some(window) = web_sys::window() else {
                    return;
                };
                let promise = window.navigator().clipboard().write_text(&text.get_untracked());
                leptos::task::spawn_local(async move {
                    let answer = match wasm_bindgen_futures::JsFuture::from(promise).await {
                        Ok(_) => "Copied",
                        Err(_) => "Copy failed",
                    };
                    let _ = said.try_set(Some(answer));
                    gloo_timers::future::TimeoutFuture::new(1_500).await;
                    let _ = said.try_set(None);
                });
            }
        >
            <Icon name="copy"/>
            <span aria-live="polite">{move || said.get().unwrap_or("Copy")}</span>
        </button>
    }
}

/// The input of a command as its card shows it: the line as the person
/// typed it; without one, a lone text argument as it is; when a form gave
/// the arguments (or there are several), each under its field's name; a
/// code run's source.
fn command_input(record: &ActivityRecord, line: &str, from_form: bool) -> AnyView {
    if let Some(view) = code::code_input(record) {
        return view;
    }
    let line = line.trim();
    let lone = match record.arguments.as_object() {
        Some(map) if map.len() == 1 => map.values().next().and_then(Value::as_str),
        _ => None,
    };
    match (line.is_empty(), from_form, lone) {
        (false, false, _) => {
            return view! { <p class="card-input card-line">{line.to_string()}</p> }.into_any();
        }
        (true, false, Some(text)) => {
            return view! { <p class="card-input card-line">{text.to_string()}</p> }.into_any();
        }
        _ => {}
    }
    // The skill's own field names, when it is still installed.
    let skill = use_context::<crate::runtime::Runtime>()
        .and_then(|rt| rt.registry().get(&record.skill_id).cloned());
    let (schema, actions) = skill
        .map(|s| (s.input_schema, s.actions))
        .unwrap_or_else(|| (Value::Null, Vec::new()));
    let fields = hearth_core::skill::form::describe_arguments(&schema, &actions, &record.arguments);
    view! {
        <div class="card-input card-fields">
            {(!line.is_empty()).then(|| view! { <p class="card-line muted">{line.to_string()}</p> })}
            <dl>
                {fields.into_iter().map(|(label, value)| {
                    if label.is_empty() {
                        view! { <dt class="card-action">{value}</dt> }.into_any()
                    } else {
                        view! { <dt>{label}</dt><dd>{value}</dd> }.into_any()
                    }
                }).collect_view()}
            </dl>
        </div>
    }
    .into_any()
}

#[component]
pub fn ResultCard(
    record: ActivityRecord,
    #[prop(optional)] icon: String,
    /// What the person typed to run it; without it the input is shown
    /// from the arguments.
    #[prop(optional)]
    line: String,
    /// The arguments came from a form (which `line` opened).
    #[prop(optional)]
    from_form: bool,
    /// Runs the result's undo; shown as a button when the result has one.
    #[prop(optional)]
    on_undo: Option<Callback<UndoAction>>,
) -> impl IntoView {
    // Only an undo this browser's own call made is offered: one read back
    // from a restored or synced record could name any skill and arguments.
    let undo = on_undo
        .and(record.result.undo.clone())
        .filter(|u| crate::runtime::use_runtime().undo_is_ours(u))
        .zip(on_undo);
    let undone = RwSignal::new(false);
    let status = record.result.status;
    let status_class = format!("status status-{}", status.as_str());
    let input = command_input(&record, &line, from_form);
    let body = record_output(&record);
    let copied = output_text(&record);
    let duration = hearth_core::util::display::duration(record.result.duration_ms);
    let wait = hearth_core::util::display::approval_wait(record.result.wait_ms);
    let time = format_time(record.result.started_at_ms);
    view! {
        <article class="card result-card" data-status=status.as_str() data-skill=record.skill_id.to_string()>
            <header class="card-head">
                <span class="card-icon"><Icon name=icon/></span>
                <span class="card-skill">{record.skill_name.clone()}</span>
                <span class=status_class>{status_label(status)}</span>
                <span class="card-meta">
                    <span class="card-duration" title="How long the skill ran">{duration}</span>
                    {wait.map(|w| view! { " · "<span class="card-wait" title="Time the call waited for your answer, not counted in its run">{w}</span> })}
                    " · "
                    <time>{time}</time>
                </span>
            </header>
            <div class="card-body card-qa">
                <div class="card-asked">{input}</div>
                <div class="card-answer" data-kind=if status == ToolStatus::Completed { "output" } else { "message" }>{body}</div>
            </div>
            {(status == ToolStatus::Denied).then(|| view! {
                <enable::EnableOffer skill_id=record.skill_id.clone() status=status/>
            })}
            <div class="card-actions">
                {(!copied.is_empty()).then(|| view! { <CopyButton text=copied.clone() label="Copy the output"/> })}
                {undo.map(|(action, cb)| {
                    let label = action.label.clone();
                    view! {
                        <button
                            class="small"
                            disabled=move || undone.get()
                            on:click=move |_| {
                                undone.set(true);
                                cb.run(action.clone());
                            }
                        >
                            {move || if undone.get() { "Undone".to_string() } else { label.clone() }}
                        </button>
                    }
                })}
            </div>
        </article>
    }
}

// --- assistant: tool calls inside a conversation ---

/// A model's tool call as it stands, for the card's badge.
fn call_status(call: &ToolCallRecord, asking: bool) -> (&'static str, String) {
    match (call.state, &call.result) {
        (CallState::Waiting, _) if asking => ("asking", "Waiting for approval".into()),
        (CallState::Waiting, _) => ("running", "Running…".into()),
        (CallState::Finished, Some(r)) | (CallState::Cancelled, Some(r)) => {
            (r.status.as_str(), status_label(r.status).into())
        }
        (CallState::Finished, None) => ("completed", "Completed".into()),
        (CallState::Refused, _) => ("refused", "Not run".into()),
        (CallState::Cancelled, None) => ("cancelled", "Stopped".into()),
    }
}

/// What a call returned, as people read it; discovery lists what it loaded.
fn call_output(call: &ToolCallRecord) -> String {
    if let Some(r) = &call.result {
        if call.name == hearth_core::discovery::DISCOVER_SKILLS_ID
            && r.status == ToolStatus::Completed
            && let Some(found) = r
                .json()
                .and_then(hearth_core::discovery::Discovery::from_json)
        {
            if found.skills.is_empty() && found.packages.is_empty() {
                return found.message;
            }
            let mut said = Vec::new();
            if !found.skills.is_empty() {
                let names: Vec<String> = found.skills.iter().map(|s| s.name.clone()).collect();
                said.push(format!("Loaded {}", names.join(", ")));
            }
            if !found.packages.is_empty() {
                let names: Vec<String> = found.packages.iter().map(|p| p.name.clone()).collect();
                said.push(format!("Found skill packages {}", names.join(", ")));
            }
            return said.join("; ");
        }
        return result_text(r);
    }
    call.note.clone().unwrap_or_default()
}

/// A tool call the model made, inline in its reply: the skill, the full
/// arguments, where it stands, how long it took and what came back.
#[component]
pub fn ToolCallCard(
    call: ToolCallRecord,
    /// The skill's display name and icon, when it is registered.
    #[prop(optional)]
    skill: Option<(String, String)>,
    /// An approval for this call is waiting.
    #[prop(optional)]
    asking: bool,
) -> impl IntoView {
    let (state, label) = call_status(&call, asking);
    let (name, icon) = skill.unwrap_or_else(|| (call.name.clone(), String::new()));
    let input = match &call.raw_arguments {
        Some(raw) => raw.clone(),
        None => input_text(&call.arguments),
    };
    let output = call_output(&call);
    let copied = output.clone();
    let duration = call
        .result
        .as_ref()
        .map(|r| hearth_core::util::display::duration(r.duration_ms));
    let wait = call
        .result
        .as_ref()
        .and_then(|r| hearth_core::util::display::approval_wait(r.wait_ms));
    let finished = matches!(call.state, CallState::Finished);
    let refused = call
        .result
        .as_ref()
        .filter(|r| r.status == ToolStatus::Denied)
        .and_then(|r| Some((hearth_core::SkillId::new(&call.name).ok()?, r.status)));
    view! {
        <article class="card tool-card" data-state=state data-skill=call.name.clone()>
            <header class="card-head">
                <span class="card-icon"><Icon name=icon/></span>
                <span class="card-skill">{name}</span>
                <span class=format!("status status-{state}")>{label}</span>
                {(state == "running" && hearth_core::builtin::code::protocol::Language::from_skill_id(&call.name).is_some())
                    .then(|| view! { <code::StopRun call_id=call.id.clone()/> })}
                {duration.map(|d| view! {
                    <span class="card-meta">
                        <span class="card-duration" title="How long the skill ran">{d}</span>
                        {wait.map(|w| view! { " · "<span class="card-wait" title="Time the call waited for your answer, not counted in its run">{w}</span> })}
                    </span>
                })}
            </header>
            <dl class="card-body">
                <dt>"Input"</dt>
                <dd><pre class="card-input">{input}</pre></dd>
                {(!output.is_empty()).then(|| view! {
                    <dt>{if finished && state == "completed" { "Output" } else { "Message" }}</dt>
                    <dd><Output text=output/></dd>
                })}
            </dl>
            {(!copied.is_empty()).then(|| view! {
                <div class="card-actions"><CopyButton text=copied label="Copy the output"/></div>
            })}
            {refused.map(|(id, status)| view! { <enable::EnableOffer skill_id=id status=status/> })}
        </article>
    }
}

/// What the artifact panel shows: an artifact the model made, stored by
/// its id, or a version pinned in a note.
#[derive(Clone, Debug, PartialEq)]
pub enum ArtifactSource {
    Stored(String),
    Pinned(Box<Artifact>),
}

crate::split::split_point!(
    artifact_panel,
    preload warm_artifact_panel,
    fn artifact_panel(source: ArtifactSource, close: Callback<()>) -> AnyView {
        view! { <artifact::ArtifactPanel source=source close=close/> }.into_any()
    }
);

/// The artifact panel, its code fetched the first time one opens; it
/// shows `source` while that holds one, and `close` is asked to clear it.
#[component]
pub fn ArtifactSlot(source: Signal<Option<ArtifactSource>>, close: Callback<()>) -> AnyView {
    // Closing removes the panel, whose button or key started it: the
    // change waits until that event is over.
    let close = Callback::new(move |()| spawn_local(async move { close.run(()) }));
    let slot = move || {
        source.get().map(|source| {
            Suspend::new(SendWrapper::new(async move {
                match artifact_panel(source, close).await {
                    Ok(view) => view,
                    Err(_) => view! {
                        <aside class="artifact-panel" aria-label="Artifact">
                            <p class="inline-error" role="alert">{crate::split::not_loaded("the artifact panel")}</p>
                        </aside>
                    }
                    .into_any(),
                }
            }))
        })
    };
    slot.into_any()
}
