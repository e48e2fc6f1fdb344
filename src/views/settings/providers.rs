//! Settings for the assistant: the model provider (preset, base URL, API
//! key, a model picked from the server's list, "Test connection"; or "In
//! this tab" with its stored models, `views::settings::tabmodel`) and how the
//! assistant behaves (step limit, always-loaded skills).
//!
//! The API key is stored in this browser's IndexedDB and sent only to the
//! configured base URL (core builds every request from it); it is never
//! shown in errors, logs or the console.

use hearth_core::assistant::agent::always_loaded_suggestion;
use hearth_core::assistant::agent::conversation::{
    ALWAYS_LOADED_MIN_CONVERSATIONS, ALWAYS_LOADED_SHARE,
};
use hearth_core::assistant::providers::images;
use hearth_core::assistant::providers::{
    ModelInfo, PRESETS, ProviderConfig, ProviderError, preset,
};
use hearth_core::ui::provider_form::{
    CUSTOM_ANTHROPIC, CUSTOM_OPENAI, FIRST_CHOICE, MAX_STEPS_PER_TURN, ProviderForm, VISION_AUTO,
    VISION_NO, VISION_YES, connected, host, listed_window, model_options, model_placeholder,
    parse_steps,
};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::assistant::{Assistant, AssistantSettings, fetch_models, use_assistant};
use crate::runtime::use_runtime;

/// Where a connection test stands.
#[derive(Clone, Debug, PartialEq)]
enum Check {
    Running,
    Connected(String),
    Failed(ProviderError),
}

/// The provider form's fields, one signal each.
#[derive(Clone, Copy)]
struct Fields {
    choice: RwSignal<String>,
    base_url: RwSignal<String>,
    api_key: RwSignal<String>,
    model: RwSignal<String>,
    /// "In this tab": the chosen stored model, the longest answer and the
    /// context length, as typed.
    tab_model: RwSignal<String>,
    tab_max_tokens: RwSignal<String>,
    tab_context: RwSignal<String>,
    /// Whether the model sees pictures: automatic, yes or no.
    vision: RwSignal<String>,
}

impl Fields {
    fn new() -> Self {
        Fields {
            choice: RwSignal::new(String::from(FIRST_CHOICE)),
            base_url: RwSignal::new(String::new()),
            api_key: RwSignal::new(String::new()),
            model: RwSignal::new(String::new()),
            tab_model: RwSignal::new(String::new()),
            tab_max_tokens: RwSignal::new(String::new()),
            tab_context: RwSignal::new(String::new()),
            vision: RwSignal::new(String::from(VISION_AUTO)),
        }
    }

    /// The form's fields as one plain value.
    fn form(self) -> ProviderForm {
        ProviderForm {
            choice: self.choice.get(),
            base_url: self.base_url.get(),
            api_key: self.api_key.get(),
            model: self.model.get(),
            tab_model: self.tab_model.get(),
            tab_max_tokens: self.tab_max_tokens.get(),
            tab_context: self.tab_context.get(),
            vision: self.vision.get(),
        }
    }

    /// And back: only the fields that changed are set.
    fn set_form(self, f: ProviderForm) {
        for (field, value) in [
            (self.choice, f.choice),
            (self.base_url, f.base_url),
            (self.api_key, f.api_key),
            (self.model, f.model),
            (self.tab_model, f.tab_model),
            (self.tab_max_tokens, f.tab_max_tokens),
            (self.tab_context, f.tab_context),
            (self.vision, f.vision),
        ] {
            if field.with_untracked(|now| *now != value) {
                field.set(value);
            }
        }
    }
}

#[component]
pub fn ProviderPanel() -> impl IntoView {
    let a = use_assistant();
    let fields = Fields::new();
    let model = fields.model;
    let show_key = RwSignal::new(false);
    let typing_model = RwSignal::new(false);
    let models: RwSignal<Vec<ModelInfo>> = RwSignal::new(Vec::new());
    let check: RwSignal<Option<Check>> = RwSignal::new(None);
    let notice: RwSignal<Option<String>> = RwSignal::new(None);
    // Whether Save was tried: from then on the form's problems show, and
    // each goes as soon as the field is fixed.
    let attempted = RwSignal::new(false);
    // Save pressed after a failed connection test: asks before saving.
    let confirming = RwSignal::new(false);
    let form = move || fields.form();
    let set_form = move |f: ProviderForm| fields.set_form(f);

    // Start from what is stored, once it has loaded; on "In this tab" when
    // the person came from the empty chat's offer of one.
    let wanted = a.tab.wanted;
    let fill = move |c: Option<ProviderConfig>| {
        let mut f = untrack(form);
        f.fill(c.as_ref());
        if wanted.get_untracked() {
            wanted.set(false);
            f.choose("in-tab".to_string());
        }
        set_form(f);
    };
    {
        let (loaded, provider) = (a.loaded, a.provider);
        if loaded.get_untracked() {
            fill(provider.get_untracked());
        } else {
            // Settings opened before storage was read: fill once it is.
            Effect::new(move |done: Option<bool>| {
                if done == Some(true) {
                    return true;
                }
                if loaded.get() {
                    fill(provider.get_untracked());
                    return true;
                }
                false
            });
        }
    }

    let in_tab = move || form().in_tab();
    let config = move || form().config();
    let needs_key = move || form().needs_key();
    let problems = Memo::new(move |_| {
        if attempted.get() {
            config().warnings()
        } else {
            Vec::new()
        }
    });
    // A failed test speaks of the settings it tried: once they change, it
    // and the question it raised go.
    Effect::new(move |before: Option<ProviderConfig>| {
        let now = config();
        if before.is_some_and(|b| b != now) {
            if matches!(check.get_untracked(), Some(Check::Failed(_))) {
                check.set(None);
            }
            confirming.set(false);
        }
        now
    });

    let on_preset = move |id: String| {
        let mut f = untrack(form);
        f.choose(id);
        set_form(f);
        models.set(Vec::new());
        check.set(None);
        attempted.set(false);
        confirming.set(false);
    };

    let test = move || {
        let c = config();
        check.set(Some(Check::Running));
        spawn_local(async move {
            match fetch_models(&c, 10_000).await {
                Ok(list) => {
                    let answer = connected(&c, &list);
                    if let Some(first) = answer.pick {
                        model.set(first);
                    }
                    typing_model.set(answer.type_name);
                    models.set(list);
                    check.set(Some(Check::Connected(answer.text)));
                }
                Err(e) => check.set(Some(Check::Failed(e))),
            }
        });
    };

    let save = {
        let a = a.clone();
        move |anyway: bool| {
            let c = config();
            attempted.set(true);
            if !c.warnings().is_empty() {
                return;
            }
            if !anyway && matches!(check.get_untracked(), Some(Check::Failed(_))) {
                confirming.set(true);
                return;
            }
            confirming.set(false);
            store(&a, c, models, notice);
        }
    };

    let remove = {
        let a = a.clone();
        move || {
            let a = a.clone();
            spawn_local(async move {
                match a.remove_provider().await {
                    Ok(()) => {
                        fill(None);
                        models.set(Vec::new());
                        notice.set(Some(
                            "Removed. The composer is a command bar again; the key was deleted."
                                .into(),
                        ));
                    }
                    Err(e) => notice.set(Some(format!("Not removed: {e}"))),
                }
            });
        }
    };

    let provider = a.provider;
    let (save_form, save_anyway) = (save.clone(), save);
    view! {
        <section class="panel provider-panel" aria-labelledby="provider-title">
            <h2 id="provider-title">"Model provider"</h2>
            <ProviderInUse/>
            <form class="provider-form" novalidate=true on:submit={
                let save = save_form;
                move |ev: leptos::ev::SubmitEvent| {
                    ev.prevent_default();
                    save(false);
                }
            }>
                <label class="field">
                    <span>"Provider"</span>
                    <select prop:value=move || fields.choice.get() on:change=move |ev| on_preset(event_target_value(&ev))>
                        {PRESETS.iter().map(|p| view! { <option value=p.id>{p.label}</option> }).collect_view()}
                        <option value=CUSTOM_OPENAI>"Custom (OpenAI-compatible)"</option>
                        <option value=CUSTOM_ANTHROPIC>"Custom (Anthropic)"</option>
                    </select>
                </label>
                <Show when=in_tab>
                    <crate::views::settings::tabmodel::TabModelPanel selected=fields.tab_model max_tokens=fields.tab_max_tokens context=fields.tab_context/>
                </Show>
                <Show when=move || !in_tab()>
                    <RemoteFields fields=fields models=models show_key=show_key typing_model=typing_model needs_key=Signal::derive(needs_key)/>
                </Show>
                <Show when=move || !problems.with(Vec::is_empty)>
                    <ul class="problems" role="alert">
                        {move || problems.get().into_iter().map(|p| view! { <li>{p}</li> }).collect_view()}
                    </ul>
                </Show>
                <CheckLine check=check/>
                <SaveAnyway confirming=confirming save=Callback::new(move |()| save_anyway(true))/>
                <div class="form-actions">
                    <Show when=move || !in_tab()>
                        <button type="button" on:click=move |_| test() disabled=move || check.get() == Some(Check::Running)>"Test connection"</button>
                    </Show>
                    <button type="submit" class="primary">"Save"</button>
                    <Show when=move || provider.with(Option::is_some)>
                        <button type="button" class="danger-outline" on:click={
                            let remove = remove.clone();
                            move |_| remove()
                        }>"Remove provider"</button>
                    </Show>
                </div>
                <Show when=move || notice.get().is_some()>
                    <p class="notice" role="status">{move || notice.get().unwrap_or_default()}</p>
                </Show>
            </form>
            <LocalServers/>
        </section>
    }
}

/// Stores the provider `c` with the settings its model needs, and says
/// how that went in `notice`.
fn store(
    a: &Assistant,
    c: ProviderConfig,
    models: RwSignal<Vec<ModelInfo>>,
    notice: RwSignal<Option<String>>,
) {
    // The model in this tab's window comes from its file.
    let window = models.with_untracked(|m| listed_window(m, &c.model));
    let shown_model = if c.in_tab() {
        a.tab
            .model(&c.model)
            .map(|m| m.name())
            .unwrap_or_else(|| c.model.clone())
    } else {
        c.model.clone()
    };
    let a = a.clone();
    spawn_local(async move {
        let mut settings = a.settings.get_untracked();
        settings.context_window = window;
        let saved = match a.save_provider(c.clone()).await {
            Ok(()) => a.save_settings(settings).await,
            Err(e) => Err(e),
        };
        match saved {
            Ok(()) => notice.set(Some(format!(
                "Saved. The assistant now uses {} with {shown_model}.",
                c.display_name(),
            ))),
            Err(e) => notice.set(Some(format!("Not saved: {e}"))),
        }
    });
}

/// Save pressed after a failed connection test: save anyway, or not.
#[component]
fn SaveAnyway(confirming: RwSignal<bool>, save: Callback<()>) -> impl IntoView {
    view! {
        <Show when=move || confirming.get()>
            <div class="confirm-save" role="alert">
                <p>"The connection test just failed with these settings, so the assistant may not reach this model. Save anyway?"</p>
                <div class="form-actions">
                    <button type="button" class="primary" on:click=move |_| save.run(())>"Save anyway"</button>
                    <button type="button" on:click=move |_| confirming.set(false)>"Cancel"</button>
                </div>
            </div>
        </Show>
    }
}

/// What the panel says is in use: the provider and its model, or none.
#[component]
fn ProviderInUse() -> impl IntoView {
    let a = use_assistant();
    let current = {
        let p = a.provider;
        let tab = a.tab.clone();
        move || {
            p.with(|p| {
                p.as_ref().map(|p| {
                    let model = if p.in_tab() {
                        tab.models.with(|l| {
                            l.iter()
                                .find(|m| m.id == p.model)
                                .map(|m| m.name())
                                .unwrap_or_else(|| "a model that is no longer stored".into())
                        })
                    } else {
                        p.model.clone()
                    };
                    format!("{} · {model}", p.label())
                })
            })
        }
    };

    view! {
        <p class="muted">
            {move || match current() {
                Some(c) => format!("In use: {c}."),
                None => "None yet: the composer works as a command bar. Pick a provider to chat with a model.".to_string(),
            }}
        </p>
    }
}

/// The fields of a provider reached over the network: base URL, API key
/// and model (picked from the server's list once tested, or typed).
#[component]
fn RemoteFields(
    fields: Fields,
    models: RwSignal<Vec<ModelInfo>>,
    show_key: RwSignal<bool>,
    typing_model: RwSignal<bool>,
    needs_key: Signal<bool>,
) -> impl IntoView {
    let Fields {
        choice,
        base_url,
        api_key,
        model,
        ..
    } = fields;
    view! {
                <label class="field">
                    <span>"Base URL"</span>
                    <input type="url" spellcheck="false" placeholder="e.g. http://localhost:8000/v1" prop:value=move || base_url.get()
                        on:input=move |ev| { base_url.set(event_target_value(&ev)); models.set(Vec::new()); }/>
                </label>
                <Show when=move || needs_key.get()>
                    <div class="field">
                        <label for="provider-key">"API key"</label>
                        <div class="key-row">
                            <input id="provider-key" type=move || if show_key.get() { "text" } else { "password" }
                                autocomplete="off" spellcheck="false"
                                prop:value=move || api_key.get()
                                on:input=move |ev| api_key.set(event_target_value(&ev))/>
                            <button type="button" class="small" on:click=move |_| show_key.update(|s| *s = !*s)>
                                {move || if show_key.get() { "Hide" } else { "Show" }}
                            </button>
                        </div>
                        <span class="muted field-hint">
                            {move || format!("Stored only in this browser. Sent only to {}.", host(&base_url.get()))}
                        </span>
                    </div>
                </Show>
                <div class="field">
                    <label for="provider-model">"Model"</label>
                    <Show
                        when=move || !models.with(Vec::is_empty) && !typing_model.get()
                        fallback=move || view! {
                            <input id="provider-model" type="text" spellcheck="false" placeholder=move || model_placeholder(&choice.get())
                                prop:value=move || model.get()
                                on:input=move |ev| model.set(event_target_value(&ev))/>
                        }
                    >
                        <div class="key-row">
                            <select id="provider-model" prop:value=move || model.get() on:change=move |ev| model.set(event_target_value(&ev))>
                                {move || {
                                    models.with(|list| model_options(list, &model.get())).into_iter().map(|(id, label)| {
                                        view! { <option value=id>{label}</option> }
                                    }).collect_view()
                                }}
                            </select>
                            <button type="button" class="small" on:click=move |_| typing_model.set(true)>"Type a name"</button>
                        </div>
                    </Show>
                </div>
                <VisionField vision=fields.vision model=model/>
    }
}

/// "Sees pictures": Hearth's judgement by the model's name, or the
/// person's word either way.
#[component]
fn VisionField(vision: RwSignal<String>, model: RwSignal<String>) -> impl IntoView {
    let judged = move || {
        if images::sees_by_name(&model.get()) {
            "Automatic (yes, by its name)"
        } else {
            "Automatic (not known: pictures are not sent)"
        }
    };
    // The label names the select by itself: a label wrapped around it
    // would take the options' words into its name.
    view! {
        <div class="field">
            <label for="provider-vision">"Sees pictures"</label>
            <select id="provider-vision" prop:value=move || vision.get() on:change=move |ev| vision.set(event_target_value(&ev))>
                <option value=VISION_AUTO>{judged}</option>
                <option value=VISION_YES>"Yes: send it pictures"</option>
                <option value=VISION_NO>"No: it reads text only"</option>
            </select>
        </div>
    }
}

/// Where the connection test stands, and why it failed.
#[component]
fn CheckLine(check: RwSignal<Option<Check>>) -> impl IntoView {
    move || {
        check.get().map(|c| match c {
                    Check::Running => view! { <p class="check muted" role="status">"Connecting…"</p> }.into_any(),
                    Check::Connected(text) => view! { <p class="check ok" role="status">{text}</p> }.into_any(),
                    Check::Failed(e) => view! {
                        <div class="provider-error" role="alert" data-kind=e.kind.as_str()>
                            <p class="error-message"><strong>{e.message.clone()}</strong></p>
                            <p class="error-advice">{e.advice.clone()}</p>
                            {e.detail.clone().map(|d| view! { <details><summary class="muted">"Details"</summary><pre>{d}</pre></details> })}
                        </div>
                    }.into_any(),
                })
    }
}

/// When, in words: "24 Nov, 14:05".
fn when(unix_ms: f64) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let d = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(unix_ms));
    format!(
        "{} {}, {}",
        d.get_date(),
        MONTHS[(d.get_month() as usize).min(11)],
        crate::platform::format_time(unix_ms)
    )
}

/// What the look for model servers on this machine found, remembered
/// from the last time it was made, and a button to look again.
#[component]
fn LocalServers() -> impl IntoView {
    let a = use_assistant();
    let probe = a.local_probe;
    let probing = a.probing;
    let names = hearth_core::assistant::providers::local_presets()
        .map(|p| p.label)
        .collect::<Vec<_>>()
        .join(", ");
    let said = move || {
        if probing.get() {
            return "Looking for model servers on this machine…".to_string();
        }
        match probe.get() {
            None => {
                format!("Hearth has not looked for model servers on this machine ({names}) yet.")
            }
            Some(p) if p.found.is_empty() => format!(
                "No model server on this machine ({names}) answered when Hearth last looked, {}.",
                when(p.at_ms)
            ),
            Some(p) => {
                let found: Vec<String> = p
                    .found
                    .iter()
                    .map(|f| {
                        let label = preset(&f.preset).map_or(f.preset.as_str(), |p| p.label);
                        let n = f.models.len();
                        format!("{label} ({n} model{})", if n == 1 { "" } else { "s" })
                    })
                    .collect();
                format!(
                    "Found on this machine when Hearth last looked, {}: {}.",
                    when(p.at_ms),
                    found.join(", ")
                )
            }
        }
    };
    view! {
        <div class="local-servers">
            <p class="muted" aria-live="polite" data-testid="local-servers">{said}</p>
            <button type="button" class="small" disabled=move || probing.get() on:click=move |_| {
                let a = a.clone();
                spawn_local(async move { a.probe_local().await });
            }>{move || if probe.with(Option::is_some) { "Look again" } else { "Look now" }}</button>
        </div>
    }
}

#[component]
pub fn AssistantPanel() -> impl IntoView {
    let a = use_assistant();
    let rt = use_runtime();
    let settings = a.settings;
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    let steps_error: RwSignal<Option<String>> = RwSignal::new(None);
    let update = {
        let a = a.clone();
        move |f: Box<dyn FnOnce(&mut AssistantSettings)>| {
            let mut next = settings.get_untracked();
            f(&mut next);
            let a = a.clone();
            spawn_local(async move {
                if let Err(e) = a.save_settings(next).await {
                    error.set(Some(e.to_string()));
                }
            });
        }
    };
    let suggestion = {
        let list = a.conversations;
        let rt = rt.clone();
        move || {
            list.with(|l| {
                always_loaded_suggestion(l, ALWAYS_LOADED_SHARE, ALWAYS_LOADED_MIN_CONVERSATIONS)
            })
            .into_iter()
            .map(|u| {
                let name = rt
                    .registry()
                    .get(&u.skill_id)
                    .map(|s| s.name.clone())
                    .unwrap_or_else(|| u.skill_id.to_string());
                format!("{name} ({:.0}% of conversations)", u.share * 100.0)
            })
            .collect::<Vec<_>>()
        }
    };
    let total = {
        let list = a.conversations;
        move || list.with(Vec::len)
    };
    let update2 = update.clone();
    view! {
        <section class="panel assistant-panel" aria-labelledby="assistant-title">
            <h2 id="assistant-title">"Assistant"</h2>
            <label class="field inline-field">
                <span>"Steps per turn"</span>
                <input type="number" min="1" max=MAX_STEPS_PER_TURN.to_string() class="steps-input"
                    aria-invalid=move || steps_error.with(Option::is_some).then_some("true")
                    aria-describedby=move || steps_error.with(Option::is_some).then_some("steps-error")
                    prop:value=move || settings.with(|s| s.max_steps.to_string())
                    on:change=move |ev| {
                        // A wrong number stays in the field, with what is
                        // wrong, and the stored limit stays as it was.
                        match parse_steps(&event_target_value(&ev)) {
                            Ok(n) => {
                                steps_error.set(None);
                                update(Box::new(move |s| s.max_steps = n));
                            }
                            Err(e) => steps_error.set(Some(e)),
                        }
                    }/>
                <span class="muted">"Model requests in one turn before the assistant stops and asks whether to go on."</span>
            </label>
            <Show when=move || steps_error.get().is_some()>
                <p class="inline-error" id="steps-error" role="alert">{move || steps_error.get().unwrap_or_default()}</p>
            </Show>
            <label class="switch always-loaded">
                <input type="checkbox" prop:checked=move || settings.with(|s| s.always_loaded)
                    on:change=move |ev| {
                        let on = event_target_checked(&ev);
                        update2(Box::new(move |s| s.always_loaded = on));
                    }/>
                <span>"Start new conversations with the skills I use most"</span>
            </label>
            <p class="muted field-hint">
                {move || {
                    let s = suggestion();
                    if total() < ALWAYS_LOADED_MIN_CONVERSATIONS {
                        format!("Skills used in at least 30% of conversations are loaded from the start. Hearth needs {ALWAYS_LOADED_MIN_CONVERSATIONS} conversations to tell; there are {} so far.", total())
                    } else if s.is_empty() {
                        "No skill is used in 30% of conversations yet.".to_string()
                    } else {
                        format!("These would be loaded: {}.", s.join(", "))
                    }
                }}
            </p>
            <Show when=move || error.get().is_some()>
                <p class="error" role="alert">{move || error.get().unwrap_or_default()}</p>
            </Show>
        </section>
    }
}
