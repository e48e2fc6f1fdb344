//! The provider settings for "In this tab": the models stored in this
//! browser (name, size, quantisation, context, architecture, whether it
//! can call tools, whether its quantisation runs without SIMD), which one
//! to use, adding one (a suggested model or a link downloaded with
//! progress, or a file picked or dropped) and deleting one; the longest
//! answer and the context length.

use hearth_core::assistant::providers::in_tab::{
    DEFAULT_MAX_TOKENS, SUGGESTIONS, StoredModel, Suggestion, context_to_load, group,
};
use hearth_core::util::display::bytes;
use leptos::html;
use leptos::prelude::*;
use leptos::task::spawn_local;
use web_sys::File;

use crate::assistant::use_assistant;
use crate::shared::confirm::ConfirmDialog;
use crate::tabmodel::{Adding, Runtime, TabModels};

/// A GGUF file from the File System Access picker; `None` when the person
/// cancelled.
async fn pick_with_picker() -> Result<Option<File>, String> {
    let gguf = crate::files::picker::Accept {
        description: "GGUF model",
        mime: "application/octet-stream",
        extension: ".gguf",
    };
    crate::files::picker::open_file(Some(&gguf))
        .await
        .map_err(|e| crate::files::js_message(&e))
}

/// A model server on this machine, when the last look found one: it runs
/// models natively, much faster than a tab can, so it is offered first.
#[component]
fn LocalServerNote() -> impl IntoView {
    let a = use_assistant();
    let probe = a.local_probe;
    let found = move || {
        probe.with(|p| {
            p.as_ref().and_then(|p| {
                let names: Vec<&str> = p
                    .found
                    .iter()
                    .map(|f| {
                        hearth_core::assistant::providers::preset(&f.preset)
                            .map_or(f.preset.as_str(), |p| p.label)
                    })
                    .collect();
                (!names.is_empty()).then(|| names.join(", "))
            })
        })
    };
    view! {
        {move || found().map(|names| view! {
            <p class="notice" data-testid="tab-local-server">
                {format!("{names} answered on this machine: it runs models natively, much faster than this tab. Choose it under Provider above, or download a model here to use without it.")}
            </p>
        })}
    }
}

fn percent(a: &Adding) -> Option<f64> {
    (a.total > 0.0).then(|| (a.loaded / a.total * 100.0).clamp(0.0, 100.0))
}

/// Where the panel's actions report to the person: one error and one
/// notice, each replaced by the next action.
#[derive(Clone, Copy)]
struct Said {
    error: RwSignal<Option<String>>,
    notice: RwSignal<Option<String>>,
}

impl Said {
    fn clear(self) {
        self.error.set(None);
        self.notice.set(None);
    }
}

/// Stores a picked or dropped file, and chooses it once stored.
fn file_adder(
    tab: TabModels,
    said: Said,
    selected: RwSignal<String>,
) -> impl Fn(File) + Clone + 'static {
    move |file: File| {
        let tab = tab.clone();
        said.clear();
        spawn_local(async move {
            match tab.add_file(file).await {
                Ok(m) => {
                    said.notice.set(Some(format!("Added {}.", m.name())));
                    selected.set(m.id);
                }
                Err(e) => said.error.set(Some(e)),
            }
        });
    }
}

/// Asks for a model file: with the File System Access picker where the
/// browser has one, else through the panel's hidden file input.
fn file_picker(
    add_file: impl Fn(File) + Clone + 'static,
    said: Said,
    input: NodeRef<html::Input>,
) -> impl Fn() + Clone + 'static {
    move || {
        if crate::files::picker::has_file_picker() {
            let add_file = add_file.clone();
            spawn_local(async move {
                match pick_with_picker().await {
                    Ok(Some(file)) => add_file(file),
                    Ok(None) => {}
                    Err(e) => said.error.set(Some(e)),
                }
            });
        } else if let Some(i) = input.get() {
            i.click();
        }
    }
}

/// Downloads a model from a link and chooses it. A suggestion whose
/// download failed is kept in `by_hand`, so the panel can show how to
/// download it by hand.
fn link_fetcher(
    tab: TabModels,
    said: Said,
    selected: RwSignal<String>,
    url: RwSignal<String>,
    by_hand: RwSignal<Option<Suggestion>>,
) -> impl Fn(String, Option<Suggestion>) + Clone + 'static {
    move |link: String, suggestion: Option<Suggestion>| {
        let tab = tab.clone();
        said.clear();
        by_hand.set(None);
        spawn_local(async move {
            match tab.add_url(&link).await {
                Ok(m) => {
                    said.notice
                        .set(Some(format!("Downloaded {}. Save to use it.", m.name())));
                    if suggestion.is_none() {
                        url.set(String::new());
                    }
                    selected.set(m.id);
                }
                Err(e) => {
                    said.error.set(Some(e));
                    by_hand.set(suggestion);
                }
            }
        });
    }
}

/// Deletes a stored model once the person confirmed, and says how much
/// space that freed.
fn model_deleter(
    tab: TabModels,
    said: Said,
    confirm: RwSignal<Option<StoredModel>>,
) -> impl Fn(StoredModel) + Clone + 'static {
    move |m: StoredModel| {
        let tab = tab.clone();
        confirm.set(None);
        spawn_local(async move {
            match tab.delete(&m.id).await {
                Ok(()) => said.notice.set(Some(format!(
                    "Deleted {} and freed {}.",
                    m.name(),
                    bytes(m.size as f64)
                ))),
                Err(e) => said.error.set(Some(format!("Not deleted: {e}"))),
            }
        });
    }
}

/// The context the chosen model will run with, against what it was
/// trained for; `context` is the form's text.
fn context_hint(model: &StoredModel, context: &str) -> String {
    let chosen = context.trim().parse::<u64>().ok();
    let runs = context_to_load(model.info.context_length, chosen);
    match model.info.context_length {
        Some(t) => format!(
            "Runs with {} tokens; the model was trained for {}. More context takes more memory.",
            group(runs),
            group(t)
        ),
        None => format!("Runs with {} tokens.", group(runs)),
    }
}

/// What the engine is doing, in words; `None` when nothing is loaded.
fn runtime_status(runtime: Runtime, models: &[StoredModel]) -> Option<String> {
    match runtime {
        Runtime::Idle => None,
        Runtime::Loading {
            phase,
            loaded,
            total,
            ..
        } => {
            let what = match phase.as_str() {
                "runtime" => "Loading the model engine",
                "threads" => "Measuring how many threads run fastest here",
                _ => "Loading the model",
            };
            let pct = if total > 0.0 {
                format!(" {:.0}%", loaded / total * 100.0)
            } else {
                String::new()
            };
            Some(format!("{what}…{pct}"))
        }
        Runtime::Ready {
            model,
            threads,
            context,
            load_ms,
        } => {
            let name = models
                .iter()
                .find(|m| m.id == model)
                .map(StoredModel::name)
                .unwrap_or(model);
            Some(format!(
                "{name} is loaded ({} tokens of context, {threads} thread{}, loaded in {:.1} s).",
                group(context),
                if threads == 1 { "" } else { "s" },
                load_ms / 1000.0
            ))
        }
    }
}

/// The suggested models an empty browser is offered, each with its size,
/// licence and whether it calls tools.
#[component]
fn Suggestions<F>(fetch_link: F, adding: RwSignal<Option<Adding>>) -> impl IntoView
where
    F: Fn(String, Option<Suggestion>) + Clone + 'static,
{
    view! {
        <p class="empty-models" data-testid="tab-models-empty">
            "No models in this browser yet. Download one of these, or add a .gguf file below: pick it, drop it here, or paste a link."
        </p>
        <LocalServerNote/>
        <ul class="tab-suggestions" aria-label="Suggested models" data-testid="tab-suggestions">
            {SUGGESTIONS.iter().map(|s| {
                let s = *s;
                let fetch_link = fetch_link.clone();
                view! {
                    <li class="tab-suggestion" data-suggestion=s.name>
                        <span class="tab-model-text">
                            <strong class="tab-model-name">{s.name}</strong>
                            <span class="muted">{s.note}</span>
                            <span class="muted tab-model-facts">
                                {format!("about {} · ", bytes(s.approx_bytes as f64))}
                                <a href=s.licence_url target="_blank" rel="noopener noreferrer">{s.licence}</a>
                                {if s.tools { " · calls tools" } else { " · chats only" }}
                            </span>
                        </span>
                        <button type="button" class="small"
                            aria-label=format!("Download {}", s.name)
                            disabled=move || adding.with(Option::is_some)
                            on:click=move |_| fetch_link(s.url.to_string(), Some(s))>"Download"</button>
                    </li>
                }
            }).collect_view()}
        </ul>
    }
}

/// One stored model: chosen with its radio button, its facts, whether it
/// calls tools or runs without SIMD, and Delete.
#[component]
fn ModelRow(
    m: StoredModel,
    selected: RwSignal<String>,
    adding: RwSignal<Option<Adding>>,
    confirm: RwSignal<Option<StoredModel>>,
) -> impl IntoView {
    let id = m.id.clone();
    let id2 = m.id.clone();
    let name = m.name();
    let facts = m.facts().join(" · ");
    let tools = m.can_call_tools();
    let slow = m.slow_quantisation();
    let m2 = m.clone();
    view! {
        <li class="tab-model" data-model=m.id.clone()>
            <label class="tab-model-pick">
                <input type="radio" name="tab-model" value=id.clone()
                    prop:checked=move || selected.get() == id
                    on:change=move |_| selected.set(id2.clone())/>
                <span class="tab-model-text">
                    <strong class="tab-model-name">{name.clone()}</strong>
                    <span class="muted tab-model-facts">{facts}</span>
                    <span class="tab-model-tools" data-tools=if tools { "on" } else { "off" }>
                        {if tools {
                            "Can call tools: skills work with it."
                        } else {
                            "Tools off: its chat template has no tool calling, so it only chats."
                        }}
                    </span>
                    {slow.map(|q| view! {
                        <span class="tab-model-slow" data-testid="tab-model-slow">
                            {format!("Runs without SIMD: Hearth's engine has no WebAssembly SIMD kernel for {q}, so it answers several times slower than a Q4_0, Q8_0 or K-quant file of the same model.")}
                        </span>
                    })}
                </span>
            </label>
            <button type="button" class="small danger-outline"
                aria-label=format!("Delete {name}")
                disabled=move || adding.with(Option::is_some)
                on:click=move |_| confirm.set(Some(m2.clone()))>"Delete"</button>
        </li>
    }
}

/// A model being downloaded or stored: its progress, and Cancel for a
/// download.
#[component]
fn AddProgress(tab: TabModels) -> impl IntoView {
    let adding = tab.adding;
    move || {
        adding.get().map(|ad| {
            let pct = percent(&ad);
            let label = match (ad.download, pct) {
                (true, Some(p)) => format!("Downloading {}: {} of {} ({p:.0}%)", ad.name, bytes(ad.loaded), bytes(ad.total)),
                (true, None) => format!("Downloading {}: {}", ad.name, bytes(ad.loaded)),
                (false, Some(p)) => format!("Storing {}: {p:.0}%", ad.name),
                (false, None) => format!("Storing {}…", ad.name),
            };
            let tab = tab.clone();
            view! {
                <div class="tab-model-progress" role="status" data-testid="tab-model-progress">
                    <progress max="100" value=pct.map(|p| p.to_string())></progress>
                    <span>{label}</span>
                    {ad.download.then(|| view! {
                        <button type="button" class="small" on:click=move |_| tab.cancel_download()>"Cancel"</button>
                    })}
                </div>
            }
        })
    }
}

/// The longest answer and the context length, with what the chosen model
/// will run with.
#[component]
fn TokenFields(
    max_tokens: RwSignal<String>,
    context: RwSignal<String>,
    models: RwSignal<Vec<StoredModel>>,
    selected: RwSignal<String>,
) -> impl IntoView {
    let hint = move || {
        let chosen = models.with(|l| l.iter().find(|m| m.id == selected.get()).cloned());
        chosen.map(|m| context_hint(&m, &context.get()))
    };
    view! {
        <div class="tab-model-settings">
            <label class="field inline-field">
                <span>"Longest answer"</span>
                <input type="number" min="16" max="32768" class="steps-input" aria-label="Longest answer in tokens"
                    placeholder=DEFAULT_MAX_TOKENS.to_string()
                    prop:value=move || max_tokens.get()
                    on:input=move |ev| max_tokens.set(event_target_value(&ev))/>
                <span class="muted">"tokens"</span>
            </label>
            <label class="field inline-field">
                <span>"Context length"</span>
                <input type="number" min="512" max="131072" step="512" class="steps-input" aria-label="Context length in tokens"
                    placeholder="automatic"
                    prop:value=move || context.get()
                    on:input=move |ev| context.set(event_target_value(&ev))/>
                <span class="muted">"tokens"</span>
            </label>
            <p class="muted field-hint">{hint}</p>
        </div>
    }
}

/// How to download a suggestion by hand after its download failed.
#[component]
fn ByHand(by_hand: RwSignal<Option<Suggestion>>) -> impl IntoView {
    move || {
        by_hand.get().map(|s| view! {
            <p class="notice tab-by-hand" data-testid="tab-by-hand">
                "Download it yourself: "
                <a href=s.url target="_blank" rel="noopener noreferrer" download="">{format!("{} (about {})", s.name, bytes(s.approx_bytes as f64))}</a>
                ", then add the file with “Add a model file” or drop it here."
            </p>
        })
    }
}

/// The in-tab part of the provider form. `selected` is the chosen model's
/// id; `max_tokens` and `context` are the form's text fields.
#[component]
pub fn TabModelPanel(
    selected: RwSignal<String>,
    max_tokens: RwSignal<String>,
    context: RwSignal<String>,
) -> impl IntoView {
    let tab = use_assistant().tab.clone();
    let (models, adding, runtime) = (tab.models, tab.adding, tab.runtime);
    let said = Said {
        error: RwSignal::new(None),
        notice: RwSignal::new(None),
    };
    let (error, notice) = (said.error, said.notice);
    let url = RwSignal::new(String::new());
    let confirm: RwSignal<Option<StoredModel>> = RwSignal::new(None);
    let by_hand: RwSignal<Option<Suggestion>> = RwSignal::new(None);
    let dragging = RwSignal::new(false);
    let input: NodeRef<html::Input> = NodeRef::new();

    // The first stored model is chosen when nothing (or a deleted one) is.
    Effect::new(move |_| {
        let list = models.get();
        let current = selected.get_untracked();
        if !list.iter().any(|m| m.id == current) {
            selected.set(list.first().map(|m| m.id.clone()).unwrap_or_default());
        }
    });

    let add_file = file_adder(tab.clone(), said, selected);
    let pick = file_picker(add_file.clone(), said, input);
    let fetch_link = link_fetcher(tab.clone(), said, selected, url, by_hand);
    let delete = model_deleter(tab.clone(), said, confirm);
    let on_input = {
        let add_file = add_file.clone();
        move |_| {
            let Some(i) = input.get() else { return };
            if let Some(file) = i.files().and_then(|f| f.get(0)) {
                add_file(file);
            }
            i.set_value("");
        }
    };
    let on_drop = move |ev: leptos::ev::DragEvent| {
        ev.prevent_default();
        dragging.set(false);
        match ev
            .data_transfer()
            .and_then(|d| d.files())
            .and_then(|f| f.get(0))
        {
            Some(f) => add_file(f),
            None => error.set(Some("Drop a .gguf model file here.".into())),
        }
    };
    let download = {
        let fetch_link = fetch_link.clone();
        move || {
            let link = url.get_untracked();
            if link.trim().is_empty() {
                error.set(Some("Paste a link to a .gguf file first.".into()));
                return;
            }
            fetch_link(link, None);
        }
    };
    let status = move || models.with(|l| runtime_status(runtime.get(), l));

    view! {
        <div class="tab-models"
            class:dragging=move || dragging.get()
            on:dragover=move |ev: leptos::ev::DragEvent| { ev.prevent_default(); dragging.set(true); }
            on:dragleave=move |_| dragging.set(false)
            on:drop=on_drop>
            <p class="muted">
                "Runs a GGUF model inside this tab with llama.cpp compiled to WebAssembly: no server, no key, and no network once the model is stored. Small instruction-tuned models (a few hundred MB) answer quickly on a laptop."
            </p>
            <Show
                when=move || !models.with(Vec::is_empty)
                fallback={
                    let fetch_link = fetch_link.clone();
                    move || view! { <Suggestions fetch_link=fetch_link.clone() adding=adding/> }
                }
            >
                <ul class="tab-model-list" role="radiogroup" aria-label="Models in this browser" data-testid="tab-models">
                    {move || models.get().into_iter().map(|m| view! { <ModelRow m=m selected=selected adding=adding confirm=confirm/> }).collect_view()}
                </ul>
            </Show>
            <div class="tab-model-add">
                <button type="button" on:click=move |_| pick() disabled=move || adding.with(Option::is_some)>"Add a model file"</button>
                <input type="file" accept=".gguf" class="visually-hidden" aria-label="Model file"
                    node_ref=input on:change=on_input/>
                <span class="muted">"or drop a .gguf file here"</span>
            </div>
            <div class="tab-model-url key-row">
                <input type="url" spellcheck="false" placeholder="https://…/model.gguf"
                    aria-label="Link to a model file"
                    prop:value=move || url.get()
                    on:input=move |ev| url.set(event_target_value(&ev))
                    on:keydown={
                        let download = download.clone();
                        move |ev: leptos::ev::KeyboardEvent| if ev.key() == "Enter" { ev.prevent_default(); download(); }
                    }/>
                <button type="button" disabled=move || adding.with(Option::is_some) on:click=move |_| download()>"Download"</button>
            </div>
            <AddProgress tab=tab.clone()/>
            <TokenFields max_tokens=max_tokens context=context models=models selected=selected/>
            <Show when=move || status().is_some()>
                <p class="muted tab-runtime" role="status" data-testid="tab-runtime">{status}</p>
            </Show>
            <Show when=move || error.get().is_some()>
                <p class="error" role="alert" data-testid="tab-model-error">{move || error.get().unwrap_or_default()}</p>
            </Show>
            <ByHand by_hand=by_hand/>
            <Show when=move || notice.get().is_some()>
                <p class="notice" role="status">{move || notice.get().unwrap_or_default()}</p>
            </Show>
            {move || confirm.get().map(|m| {
                let delete = delete.clone();
                let m2 = m.clone();
                view! {
                    <ConfirmDialog
                        title=format!("Delete {}?", m.name())
                        message=format!("The file ({}) is removed from this browser and its space freed. You can add it again later from the file or its link.", bytes(m.size as f64))
                        confirm_label="Delete model".to_string()
                        on_confirm=move || delete(m2.clone())
                        on_cancel=move || confirm.set(None)
                    />
                }
            })}
        </div>
    }
}
