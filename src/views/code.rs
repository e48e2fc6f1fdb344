//! Code runs in the UI: the result card's output (stdout, stderr, the
//! value, files to download), Python's loading progress, and the Code panel
//! in Settings (keep variables, restart Python, whether a runaway run can
//! be interrupted and why not).
//!
//! Everything the sandbox returned is shown as text: output goes into
//! `<pre>` as text nodes and files are offered as downloads, so nothing a
//! snippet prints can become markup in the app.

use hearth_core::builtin::code::output::{
    CodeReport, artifact_bytes, is_previewable_image, truncation_notice,
};
use hearth_core::builtin::code::protocol::Language;
use hearth_core::skill::activity::ActivityRecord;
use hearth_core::{Content, ToolStatus};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::runtime::use_runtime;
use crate::sandbox::PythonState;

/// The card's input for a code run: the code as written, then the files
/// and input it was handed; `None` for other records.
pub fn code_input(record: &ActivityRecord) -> Option<AnyView> {
    Language::from_skill_id(record.skill_id.as_str())?;
    let args = hearth_core::builtin::code::RunArgs::parse(&record.arguments).ok()?;
    let files = (!args.files.is_empty()).then(|| args.files.join(", "));
    let input = args
        .input
        .as_ref()
        .map(|v| serde_json::to_string(v).unwrap_or_default());
    let timeout = args
        .timeout_ms
        .map(|t| hearth_core::util::display::duration(t as f64));
    Some(
        view! {
            <div class="code-input">
                <pre class="card-input code-source">{args.code}</pre>
                {files.map(|f| view! { <p class="code-meta"><span class="code-label">"Files"</span>" "{f}</p> })}
                {input.map(|i| view! { <p class="code-meta"><span class="code-label">"Input"</span>" "<code>{i}</code></p> })}
                {timeout.map(|t| view! { <p class="code-meta"><span class="code-label">"Time limit"</span>" "{t}</p> })}
            </div>
        }
        .into_any(),
    )
}

/// The card body for a completed code run, or `None` for other records.
pub fn code_output(record: &ActivityRecord) -> Option<AnyView> {
    Language::from_skill_id(record.skill_id.as_str())?;
    if record.result.status != ToolStatus::Completed {
        return None;
    }
    let report: CodeReport = record.result.content.iter().find_map(|c| match c {
        Content::Json { value } => serde_json::from_value(value.clone()).ok(),
        _ => None,
    })?;
    let files: Vec<ArtifactFile> = record
        .result
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Artifact {
                name,
                mime_type,
                data,
            } => Some(ArtifactFile {
                size: report
                    .artifacts
                    .iter()
                    .find(|a| &a.name == name)
                    .map(|a| a.size)
                    .unwrap_or(0),
                name: name.clone(),
                mime: mime_type.clone(),
                data: data.clone(),
            }),
            _ => None,
        })
        .collect();
    Some(view! { <CodeOutput report=report files=files/> }.into_any())
}

/// A file a run wrote, as kept with its result.
#[derive(Clone, Debug, PartialEq)]
pub struct ArtifactFile {
    pub name: String,
    pub mime: String,
    /// Base64.
    pub data: String,
    pub size: u64,
}

fn blob_url(bytes: &[u8], mime: &str) -> Option<String> {
    let blob = crate::platform::blob(bytes, mime).ok()?;
    web_sys::Url::create_object_url_with_blob(&blob).ok()
}

/// Offers a file a run wrote (base64 `data`) as a download, through the
/// app's one download helper; never opens it in the app.
pub fn download(name: &str, mime: &str, data: &str) -> Result<(), String> {
    let bytes = artifact_bytes(data)?;
    crate::platform::download_bytes(name, mime, &bytes)
}

#[component]
pub fn CodeOutput(report: CodeReport, files: Vec<ArtifactFile>) -> impl IntoView {
    let empty = report.stdout.is_empty()
        && report.stderr.is_empty()
        && report.value_text().is_none()
        && files.is_empty();
    let stdout_notice =
        (report.stdout_dropped > 0).then(|| truncation_notice(report.stdout_dropped));
    let stderr_notice =
        (report.stderr_dropped > 0).then(|| truncation_notice(report.stderr_dropped));
    let value = report.value_text();
    let dropped = report.artifacts_dropped.clone();
    view! {
        <div class="code-output" data-language=format!("{:?}", report.language).to_lowercase()>
            {(!report.stdout.is_empty() || stdout_notice.is_some()).then(|| view! {
                <section class="code-stream" aria-label="Output">
                    <pre class="code-stdout">{report.stdout.clone()}</pre>
                    {stdout_notice.map(|n| view! { <p class="code-truncated">{n}</p> })}
                </section>
            })}
            {(!report.stderr.is_empty() || stderr_notice.is_some()).then(|| view! {
                <section class="code-stream code-stream-err" aria-label="Errors and warnings">
                    <span class="code-label">"stderr"</span>
                    <pre class="code-stderr">{report.stderr.clone()}</pre>
                    {stderr_notice.map(|n| view! { <p class="code-truncated">{n}</p> })}
                </section>
            })}
            {value.map(|v| view! {
                <section class="code-value-row" aria-label="Value">
                    <span class="code-label">"Value"</span>
                    <pre class="code-value">{v}</pre>
                </section>
            })}
            {(!files.is_empty()).then(|| view! {
                <ul class="code-files" aria-label="Files written">
                    {files.into_iter().map(|file| view! { <ArtifactRow file=file/> }).collect_view()}
                </ul>
            })}
            {(!dropped.is_empty()).then(|| view! {
                <p class="code-truncated">"Not returned: "{dropped.join("; ")}</p>
            })}
            {empty.then(|| view! { <p class="muted code-empty">"(no output)"</p> })}
        </div>
    }
}

#[component]
fn ArtifactRow(file: ArtifactFile) -> impl IntoView {
    let ArtifactFile {
        name,
        mime,
        data,
        size,
    } = file;
    let preview = if is_previewable_image(&mime) {
        artifact_bytes(&data).ok().and_then(|b| blob_url(&b, &mime))
    } else {
        None
    };
    if let Some(url) = preview.clone() {
        on_cleanup(move || {
            let _ = web_sys::Url::revoke_object_url(&url);
        });
    }
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    let label = format!("Download {name}");
    let (n, m, d) = (name.clone(), mime.clone(), data);
    view! {
        <li class="code-file" data-file=name.clone()>
            {preview.map(|url| view! { <img class="code-preview" src=url alt=name.clone()/> })}
            <span class="code-file-name"><crate::icons::Icon name="file"/>{name.clone()}</span>
            <span class="muted">{hearth_core::util::display::bytes(size as f64)}" · "{mime}</span>
            <button type="button" aria-label=label on:click=move |_| {
                if let Err(e) = download(&n, &m, &d) {
                    error.set(Some(e));
                }
            }>"Download"</button>
            <Show when=move || error.get().is_some()>
                <span class="inline-error">{move || error.get().unwrap_or_default()}</span>
            </Show>
        </li>
    }
}

fn percent(loaded: f64, total: f64) -> f64 {
    if total > 0.0 {
        (loaded / total * 100.0).clamp(0.0, 100.0)
    } else {
        0.0
    }
}

/// Python's loading progress, shown above the composer while it loads.
#[component]
pub fn PythonStatus() -> impl IntoView {
    let state = use_runtime().sandbox().python_state();
    move || {
        match state.get() {
        PythonState::NotLoaded | PythonState::Ready { .. } => ().into_any(),
        PythonState::Downloading { loaded, total } => view! {
            <div class="python-status" role="status" data-testid="python-status">
                <progress max="100" value=percent(loaded, total)></progress>
                <span>{format!(
                    "Loading Python… {:.0}% ({} of {})",
                    percent(loaded, total),
                    hearth_core::util::display::bytes(loaded),
                    hearth_core::util::display::bytes(total)
                )}</span>
            </div>
        }
        .into_any(),
        PythonState::Starting => view! {
            <div class="python-status" role="status" data-testid="python-status">
                <progress></progress>
                <span>"Starting Python…"</span>
            </div>
        }
        .into_any(),
        PythonState::Failed(message) => view! {
            <div class="python-status python-status-failed" role="status" data-testid="python-status">
                <span>"Python could not load: "{message}</span>
            </div>
        }
        .into_any(),
    }
    }
}

fn state_text(state: &PythonState) -> String {
    match state {
        PythonState::NotLoaded => "Not loaded yet; it loads the first time code needs it".into(),
        PythonState::Downloading { loaded, total } => {
            format!("Loading… {:.0}%", percent(*loaded, *total))
        }
        PythonState::Starting => "Starting…".into(),
        PythonState::Ready { version, load_ms } if *load_ms > 0.0 => format!(
            "Ready: Pyodide {version}, started in {}",
            hearth_core::util::display::duration(*load_ms)
        ),
        PythonState::Ready { version, .. } => format!("Ready: Pyodide {version}"),
        PythonState::Failed(message) => format!("Could not load: {message}"),
    }
}

/// Whether a Python run past its limit can be interrupted (which keeps its
/// variables) or must be stopped by restarting Python, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InterruptNote {
    /// The sandbox has not started yet.
    Unknown,
    Available,
    /// Unavailable; reloading the page would make it available.
    AfterReload,
    Unavailable(&'static str),
}

/// What the Code panel says about interrupts, from whether the sandbox
/// and the page are cross-origin isolated and how the offline worker is.
pub fn interrupt_note(
    sandbox_isolated: Option<bool>,
    page_isolated: bool,
    worker_controls: bool,
    worker_possible: bool,
) -> InterruptNote {
    match sandbox_isolated {
        None => InterruptNote::Unknown,
        Some(true) => InterruptNote::Available,
        Some(false) if page_isolated => InterruptNote::Unavailable(
            "the browser did not give the sandbox cross-origin isolation",
        ),
        Some(false) if worker_controls => InterruptNote::AfterReload,
        Some(false) if worker_possible => InterruptNote::Unavailable(
            "this host sends no cross-origin isolation headers (COOP and COEP), and Hearth's offline worker, which adds them, is not active yet; reload once Storage, below, says Offline: Ready",
        ),
        Some(false) => InterruptNote::Unavailable(
            "this host sends no cross-origin isolation headers (COOP and COEP), and this browser cannot run Hearth's offline worker here, which would add them (it needs https or localhost)",
        ),
    }
}

fn page_isolated() -> bool {
    web_sys::window()
        .and_then(|w| js_sys::Reflect::get(&w, &"crossOriginIsolated".into()).ok())
        .and_then(|v| v.as_bool())
        .unwrap_or(false)
}

const STOPPED_BY_RESTART: &str = "A Python run past its time limit, or stopped with Stop, is stopped by restarting Python, so its variables are lost.";

/// The Code panel's line about interrupting runaway Python runs.
#[component]
fn InterruptRow() -> impl IntoView {
    let isolated = use_runtime().sandbox().can_interrupt();
    let pwa = crate::pwa::use_pwa();
    let note = move || {
        let possible = !matches!(pwa.offline.get(), crate::pwa::Offline::Unsupported);
        interrupt_note(
            isolated.get(),
            page_isolated(),
            crate::pwa::controls_this_page(),
            possible,
        )
    };
    view! {
        <dt>"Interrupting Python"</dt>
        <dd data-testid="python-interrupt">
            {move || match note() {
                InterruptNote::Unknown => "Known once the sandbox has started.".to_string().into_any(),
                InterruptNote::Available => "Available: a Python run past its time limit, or stopped with Stop, is interrupted and keeps its variables.".to_string().into_any(),
                InterruptNote::AfterReload => view! {
                    "Unavailable until you reload: this host sends no cross-origin isolation headers (COOP and COEP), and Hearth's offline worker, which adds them, took over after this page had loaded. "
                    {STOPPED_BY_RESTART}" "
                    <button type="button" class="small" on:click=move |_| {
                        if let Some(w) = web_sys::window() {
                            let _ = w.location().reload();
                        }
                    }>"Reload now"</button>
                }.into_any(),
                InterruptNote::Unavailable(why) => format!("Unavailable: {why}. {STOPPED_BY_RESTART}").into_any(),
            }}
        </dd>
    }
}

/// The Code panel in Settings.
#[component]
pub fn CodeSettings() -> impl IntoView {
    let rt = use_runtime();
    let sandbox = rt.sandbox();
    let state = sandbox.python_state();
    let persist = RwSignal::new(sandbox.persist_python());
    let restarting = RwSignal::new(false);
    let notice: RwSignal<Option<String>> = RwSignal::new(None);
    let toggle = move |ev: leptos::ev::Event| {
        let on = event_target_checked(&ev);
        persist.set(on);
        rt.sandbox().set_persist_python(on);
        let db = rt.db();
        spawn_local(async move {
            if let Err(e) = crate::sandbox::save_persist_python(&db, on).await {
                notice.set(Some(format!(
                    "The setting applies now but was not saved: {e}"
                )));
            }
        });
    };
    let restart = move |_| {
        restarting.set(true);
        notice.set(None);
        let sandbox = sandbox.clone();
        spawn_local(async move {
            match sandbox.restart_python().await {
                Ok(()) => notice.set(Some("Python was restarted with fresh variables.".into())),
                Err(e) => notice.set(Some(e.to_string())),
            }
            restarting.set(false);
        });
    };
    let state_for_text = state.clone();
    view! {
        <section class="panel" aria-labelledby="code-title">
            <h2 id="code-title">"Code"</h2>
            <p class="muted">"JavaScript and Python run in a sandbox: an isolated frame with no network and no access to Hearth's data, stopped when a run takes too long."</p>
            <dl class="facts">
                <dt>"Python"</dt>
                <dd data-testid="python-state">{move || state_text(&state_for_text.get())}</dd>
                <InterruptRow/>
            </dl>
            <label class="toggle-row">
                <input type="checkbox" prop:checked=move || persist.get() on:change=toggle/>
                <span>"Keep Python variables between runs in a conversation"</span>
            </label>
            <div class="time-limits">
                <TimeLimit language=Language::Javascript/>
                <TimeLimit language=Language::Python/>
            </div>
            <div class="panel-actions">
                <button type="button" on:click=restart disabled=move || restarting.get()>
                    {move || if restarting.get() { "Restarting…" } else { "Restart Python" }}
                </button>
            </div>
            <Show when=move || notice.get().is_some()>
                <p class="notice" role="status">{move || notice.get().unwrap_or_default()}</p>
            </Show>
        </section>
    }
}

/// The time limit of `language`'s runs that name none, in seconds, saved
/// when it is a whole number within bounds and explained when it is not.
#[component]
fn TimeLimit(language: Language) -> impl IntoView {
    let rt = use_runtime();
    let sandbox = rt.sandbox();
    let typed = RwSignal::new((sandbox.time_limit_ms(language) / 1000).to_string());
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    let saved: RwSignal<Option<String>> = RwSignal::new(None);
    let id = format!("time-limit-{}", language.skill_id());
    let error_id = format!("{id}-error");
    let on_change = move |ev: leptos::ev::Event| {
        let text = event_target_value(&ev);
        typed.set(text.clone());
        saved.set(None);
        match hearth_core::builtin::code::parse_time_limit(language, &text) {
            Err(e) => error.set(Some(e)),
            Ok(ms) => {
                error.set(None);
                rt.sandbox().set_time_limit_ms(language, ms);
                let db = rt.db();
                spawn_local(async move {
                    match crate::sandbox::save_time_limit(&db, language, ms).await {
                        Ok(()) => saved.set(Some(format!(
                            "{} runs now stop after {}.",
                            language.label(),
                            hearth_core::util::display::duration(ms as f64)
                        ))),
                        Err(e) => error.set(Some(format!(
                            "The limit applies now but was not saved: {e}"
                        ))),
                    }
                });
            }
        }
    };
    let default_s = language.default_timeout_ms() / 1000;
    let max_s = language.max_timeout_ms() / 1000;
    let described = error_id.clone();
    view! {
        <div class="field time-limit">
            <label for=id.clone()>{format!("{} time limit (seconds)", language.label())}</label>
            <input id=id type="number" min="1" max=max_s.to_string() step="1" class="steps-input"
                aria-invalid=move || error.with(Option::is_some).then_some("true")
                aria-describedby=move || error.with(Option::is_some).then(|| described.clone())
                prop:value=move || typed.get()
                on:change=on_change/>
            <span class="muted field-hint">{format!("For runs that ask for no limit of their own; {default_s} unless you change it, at most {max_s}.")}</span>
            <Show when=move || error.get().is_some()>
                <p class="inline-error" id=error_id.clone() role="alert">{move || error.get().unwrap_or_default()}</p>
            </Show>
            <Show when=move || saved.get().is_some()>
                <p class="muted field-hint" role="status">{move || saved.get().unwrap_or_default()}</p>
            </Show>
        </div>
    }
}

/// Stop for the code run the call `call_id` started, while it runs: on a
/// tool card whose call is a code run still under way.
#[component]
pub fn StopRun(call_id: String) -> impl IntoView {
    let rt = use_runtime();
    let running = rt.sandbox().running();
    let id = call_id.clone();
    let under_way =
        move || running.with(|r| r.iter().any(|x| x.call_id.as_deref() == Some(id.as_str())));
    view! {
        <Show when=under_way>
            <button type="button" class="small stop" title="Stop this run" on:click={
                let rt = rt.clone();
                let call_id = call_id.clone();
                move |_| {
                    rt.sandbox().stop_call(&call_id);
                }
            }><crate::icons::Icon name="stop"/>" Stop"</button>
        </Show>
    }
}
