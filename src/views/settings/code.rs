//! The Code panel in Settings: keep variables, restart Python, each
//! language's time limit, and whether a runaway run can be interrupted and
//! why not.

use hearth_core::builtin::code::protocol::Language;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::runtime::use_runtime;
use crate::shared::python::state_text;

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
