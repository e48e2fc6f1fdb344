//! The artifact panel, beside the chat or over a note: an artifact's live
//! preview in its sandbox, its source, its versions and the changes of
//! each, copy, download, and pinning a version into a note. Its code is
//! the `artifact_panel` chunk, fetched the first time an artifact opens;
//! the places that open it hold only which artifact is open.
//!
//! The preview is `/sandbox/artifact.html` in an opaque origin, as MCP
//! Apps are (`src/mcp/apps.rs`): the frame has no sandbox attribute only
//! when the service worker controls the page, so the worker serves it
//! offline with its `sandbox allow-scripts` header. The page proves its
//! no-network policy is in force before it says it is ready; only then is
//! it sent the document, which core builds with its kind's policy first.

use hearth_core::builtin::artifact_pins::pin_into;
use hearth_core::builtin::artifacts::{
    self, Artifact, ArtifactKind, DiffLine, PreviewInput, preview_document,
};
use hearth_core::stores::ARTIFACTS;
use leptos::html;
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::json;
use wasm_bindgen::{JsCast, JsValue};

use super::{ArtifactSource, CopyButton};
use crate::icons::Icon;
use crate::mcp::apps::{from_sandbox_page, post_to};
use crate::runtime::use_runtime;
use crate::shared::toast::{Toast, ToastBar};

/// The sandbox page every preview runs in.
pub const SANDBOX_PAGE: &str = "/sandbox/artifact.html";
/// Chart.js, copied into the build from npm.
const CHART_LIBRARY: &str = "/vendor/chart.umd.min.js";

/// Which view of the artifact the panel shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tab {
    Preview,
    Source,
    Changes,
}

impl Tab {
    const ALL: [Tab; 3] = [Tab::Preview, Tab::Source, Tab::Changes];

    fn label(self) -> &'static str {
        match self {
            Tab::Preview => "Preview",
            Tab::Source => "Source",
            Tab::Changes => "Changes",
        }
    }

    fn slug(self) -> &'static str {
        match self {
            Tab::Preview => "preview",
            Tab::Source => "source",
            Tab::Changes => "changes",
        }
    }
}

/// Chart.js's text, fetched once per page (the service worker serves it
/// offline).
async fn chart_library() -> Result<String, String> {
    thread_local! {
        static CACHED: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
    }
    if let Some(text) = CACHED.with(|c| c.borrow().clone()) {
        return Ok(text);
    }
    let window = web_sys::window().ok_or("no window")?;
    let said = |e: JsValue| format!("the chart library did not load: {e:?}");
    let response: web_sys::Response =
        wasm_bindgen_futures::JsFuture::from(window.fetch_with_str(CHART_LIBRARY))
            .await
            .map_err(said)?
            .dyn_into()
            .map_err(said)?;
    if !response.ok() {
        return Err(format!(
            "the chart library did not load (HTTP {})",
            response.status()
        ));
    }
    let text = wasm_bindgen_futures::JsFuture::from(response.text().map_err(said)?)
        .await
        .map_err(said)?
        .as_string()
        .ok_or("the chart library is not text")?;
    CACHED.with(|c| *c.borrow_mut() = Some(text.clone()));
    Ok(text)
}

/// The document the preview frame shows for one version.
async fn document_for(kind: ArtifactKind, title: &str, source: &str) -> Result<String, String> {
    let made = match kind {
        ArtifactKind::Html | ArtifactKind::Svg => {
            preview_document(kind, title, source, PreviewInput::Source)
        }
        ArtifactKind::Markdown => {
            let html = hearth_markdown::to_safe_html(source);
            preview_document(kind, title, source, PreviewInput::Rendered(&html))
        }
        ArtifactKind::Chart => {
            let library = chart_library().await?;
            preview_document(kind, title, source, PreviewInput::ChartLibrary(&library))
        }
    };
    made.ok_or_else(|| "this version cannot be previewed".to_string())
}

/// The panel, for the artifact `source`; `close` hides it.
#[component]
pub fn ArtifactPanel(source: ArtifactSource, close: Callback<()>) -> impl IntoView {
    let rt = use_runtime();
    crate::shared::focus::return_on_close();
    let loaded: RwSignal<Option<Result<Artifact, String>>> = RwSignal::new(None);
    // The version shown, counted from 1; `None` follows the newest.
    let chosen: RwSignal<Option<usize>> = RwSignal::new(None);
    let tab = RwSignal::new(Tab::Preview);
    let toast: RwSignal<Option<Toast>> = RwSignal::new(None);
    let pinning = RwSignal::new(false);
    let pin_button = NodeRef::<html::Button>::new();
    // The form closes on Pin, Cancel or Escape; the keyboard goes back to
    // the button that opened it, so Escape still closes the panel after.
    let pin_done = Callback::new(move |()| {
        pinning.set(false);
        if let Some(b) = pin_button.get_untracked() {
            let _ = b.focus();
        }
    });
    let stored = matches!(source, ArtifactSource::Stored(_));
    let id = match source {
        ArtifactSource::Stored(id) => {
            let rt = rt.clone();
            let read_id = id.clone();
            Effect::new(move |_| {
                rt.versions().artifacts.track();
                let (db, id) = (rt.db(), read_id.clone());
                spawn_local(async move {
                    let read = match db.get::<Artifact>(ARTIFACTS, &id).await {
                        Ok(Some(a)) => Ok(a),
                        Ok(None) => Err("This artifact is no longer stored.".to_string()),
                        Err(e) => Err(format!("The artifact could not be read: {e}")),
                    };
                    let _ = loaded.try_set(Some(read));
                });
            });
            id
        }
        ArtifactSource::Pinned(a) => {
            let id = a.id.clone();
            loaded.set(Some(Ok(*a)));
            id
        }
    };
    let artifact = move || loaded.get().and_then(Result::ok);
    let count = move || artifact().map_or(0, |a| a.versions.len());
    let shown = move || {
        let n = count();
        chosen.get().unwrap_or(n).clamp(1.min(n), n)
    };
    let step = move |by: isize| {
        let n = count();
        let next = (shown() as isize + by).clamp(1, n as isize) as usize;
        chosen.set(if next == n { None } else { Some(next) });
    };
    let source = move || {
        artifact().and_then(|a| {
            a.versions
                .get(shown().checked_sub(1)?)
                .map(|v| v.source.clone())
        })
    };
    let heading = NodeRef::<html::H2>::new();
    Effect::new(move |_| {
        if let Some(h) = heading.get() {
            let _ = h.focus();
        }
    });
    let on_key = move |e: web_sys::KeyboardEvent| {
        if e.key() == "Escape" {
            e.prevent_default();
            close.run(());
        }
    };
    let title = move || {
        artifact()
            .map(|a| a.title)
            .unwrap_or_else(|| "Artifact".into())
    };

    view! {
        <aside class="artifact-panel" aria-labelledby="artifact-title" data-artifact=id.clone() on:keydown=on_key>
            <header class="artifact-head">
                <Icon name="artifact"/>
                <h2 id="artifact-title" tabindex="-1" node_ref=heading>{title}</h2>
                <span class="muted artifact-kind">{move || artifact().map(|a| a.kind.label())}</span>
                <button type="button" class="icon-button" aria-label="Close the artifact" title="Close (Esc)" on:click=move |_| close.run(())>
                    <Icon name="x"/>
                </button>
            </header>
            {move || match loaded.get() {
                None => view! { <p class="muted" role="status">"Opening the artifact…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="inline-error" role="alert">{e}</p> }.into_any(),
                Some(Ok(_)) => view! {
                    <div class="artifact-bar">
                        <div class="tabs" role="tablist" aria-label="View">
                            // A pin is one version: nothing to compare it with.
                            {Tab::ALL.into_iter().filter(|t| stored || *t != Tab::Changes).map(|t| view! {
                                <button type="button" role="tab" id=format!("artifact-tab-{}", t.slug())
                                    aria-controls="artifact-view"
                                    aria-selected=move || (tab.get() == t).to_string()
                                    on:click=move |_| tab.set(t)>
                                    {t.label()}
                                </button>
                            }).collect_view()}
                        </div>
                        <Show when=move || !stored>
                            <span class="muted artifact-pinned">"Pinned in a note"</span>
                        </Show>
                        <Show when=move || stored>
                            <div class="artifact-versions" role="group" aria-label="Versions">
                                <button type="button" class="icon-button" aria-label="Previous version"
                                    disabled=move || shown() <= 1 on:click=move |_| step(-1)>"‹"</button>
                                <span class="artifact-version" aria-live="polite" data-version=move || shown().to_string()>
                                    {move || format!("v{} of {}", shown(), count())}
                                </span>
                                <button type="button" class="icon-button" aria-label="Next version"
                                    disabled=move || count() <= shown() on:click=move |_| step(1)>"›"</button>
                            </div>
                        </Show>
                        <div class="artifact-actions">
                            <CopyButton text=Signal::derive(move || source().unwrap_or_default()) label="Copy the source"/>
                            <button type="button" class="small ghost" aria-label="Download the source"
                                on:click=move |_| {
                                    if let (Some(a), Some(text)) = (artifact(), source()) {
                                        let _ = crate::platform::download_text(&a.file_name(), a.kind.mime(), &text);
                                    }
                                }>
                                <Icon name="download"/>"Download"
                            </button>
                            <Show when=move || stored>
                                <button type="button" class="small ghost artifact-pin-open" node_ref=pin_button
                                    aria-expanded=move || pinning.get().to_string()
                                    on:click=move |_| pinning.update(|p| *p = !*p)>
                                    <Icon name="note"/>"Pin to note"
                                </button>
                            </Show>
                        </div>
                    </div>
                    <Show when=move || pinning.get()>
                        <PinForm
                            version=Signal::derive(shown)
                            artifact=Signal::derive(artifact)
                            toast=toast
                            done=pin_done
                        />
                    </Show>
                    <div id="artifact-view" class="artifact-view" role="tabpanel"
                        aria-labelledby=move || format!("artifact-tab-{}", tab.get().slug())>
                        {move || {
                            let a = artifact()?;
                            let v = shown();
                            Some(match tab.get() {
                                Tab::Preview => {
                                    let source = a.versions.get(v.checked_sub(1)?)?.source.clone();
                                    view! { <Preview kind=a.kind title=a.title.clone() source=source/> }.into_any()
                                }
                                Tab::Source => view! {
                                    <pre class="artifact-source" tabindex="0" aria-label="Source"><code>{source()}</code></pre>
                                }.into_any(),
                                Tab::Changes => changes(&a, v).into_any(),
                            })
                        }}
                    </div>
                }.into_any(),
            }}
            <ToastBar toast=toast/>
        </aside>
    }
}

/// Pins the version shown into a new note or at the end of one the
/// person picks, through the notes skill (so the Activity log has it and
/// Undo takes it back out).
#[component]
fn PinForm(
    version: Signal<usize>,
    artifact: Signal<Option<Artifact>>,
    toast: RwSignal<Option<Toast>>,
    done: Callback<()>,
) -> impl IntoView {
    let rt = use_runtime();
    // "" is a new note; otherwise a note's id.
    let target = RwSignal::new(String::new());
    let notes = {
        let rt = rt.clone();
        move || {
            rt.versions().notes.track();
            let book = rt.data().notes.borrow();
            let mut all: Vec<(String, String, f64)> = book
                .iter()
                .map(|n| (n.id.clone(), n.title.clone(), n.updated_ms))
                .collect();
            all.sort_by(|a, b| b.2.total_cmp(&a.2));
            all
        }
    };
    let select = NodeRef::<html::Select>::new();
    Effect::new(move |_| {
        if let Some(s) = select.get() {
            let _ = s.focus();
        }
    });
    let pin = move || {
        let Some(a) = artifact.get_untracked() else {
            return;
        };
        let v = version.get_untracked();
        let Some(source) = v.checked_sub(1).and_then(|i| a.versions.get(i)) else {
            return;
        };
        let note_id = target.get_untracked();
        let existing = (!note_id.is_empty()).then(|| {
            rt.data()
                .notes
                .borrow()
                .get(&note_id)
                .map(|n| (n.body.clone(), n.title.clone()))
        });
        let (body, note_title) = match existing {
            None => (String::new(), a.title.clone()),
            Some(Some(found)) => found,
            Some(None) => {
                toast.set(Some(Toast::error("That note is gone; pick another.")));
                return;
            }
        };
        let joined = match pin_into(&body, a.kind, &a.title, &source.source) {
            Ok(b) => b,
            Err(e) => {
                toast.set(Some(Toast::error(format!("Not pinned: {e}."))));
                return;
            }
        };
        let args = if note_id.is_empty() {
            json!({"action": "create", "title": note_title, "body": joined})
        } else {
            json!({"action": "update", "id": note_id, "body": joined})
        };
        let rt = rt.clone();
        let message = format!(
            "Pinned v{v} of \u{201c}{}\u{201d} to the note \u{201c}{note_title}\u{201d}.",
            a.title
        );
        spawn_local(async move {
            match rt.edit("notes", args).await {
                Ok(out) => {
                    toast.set(Some(Toast {
                        message,
                        ..Toast::from_output(&out)
                    }));
                    done.run(());
                }
                Err(e) => toast.set(Some(Toast::error(format!("Not pinned: {}", e.message)))),
            }
        });
    };
    view! {
        <form class="artifact-pin" aria-label="Pin to a note"
            on:submit=move |e| { e.prevent_default(); pin(); }
            on:keydown=move |e: web_sys::KeyboardEvent| {
                // Escape here closes the form, not the panel.
                if e.key() == "Escape" {
                    e.prevent_default();
                    e.stop_propagation();
                    done.run(());
                }
            }>
            <label>
                {move || format!("Pin v{} to", version.get())}
                <select node_ref=select aria-label="Note" on:change=move |e| target.set(event_target_value(&e))>
                    <option value="" selected=move || target.get().is_empty()>"A new note"</option>
                    {move || notes().into_iter().map(|(id, title, _)| {
                        let is = id.clone();
                        view! { <option value=id selected=move || target.get() == is>{title}</option> }
                    }).collect_view()}
                </select>
            </label>
            <button type="submit" class="small primary">"Pin"</button>
            <button type="button" class="small ghost" on:click=move |_| done.run(())>"Cancel"</button>
        </form>
    }
}

/// The line diff of version `v` against the one before it.
fn changes(a: &Artifact, v: usize) -> impl IntoView {
    let (Some(old), Some(new)) = (
        v.checked_sub(2).and_then(|i| a.versions.get(i)),
        v.checked_sub(1).and_then(|i| a.versions.get(i)),
    ) else {
        return view! { <p class="muted artifact-diff-none">"The first version: nothing to compare with."</p> }.into_any();
    };
    let lines = artifacts::line_diff(&old.source, &new.source);
    let added = lines
        .iter()
        .filter(|l| matches!(l, DiffLine::Added(_)))
        .count();
    let removed = lines
        .iter()
        .filter(|l| matches!(l, DiffLine::Removed(_)))
        .count();
    let rows = lines
        .into_iter()
        .map(|l| {
            let (class, mark, text) = match l {
                DiffLine::Same(t) => ("same", " ", t),
                DiffLine::Added(t) => ("added", "+", t),
                DiffLine::Removed(t) => ("removed", "−", t),
            };
            view! { <span class=format!("diff-line {class}")><span class="diff-mark" aria-hidden="true">{mark}</span>{text.to_string()}"\n"</span> }
        })
        .collect_view();
    view! {
        <p class="muted artifact-diff-summary">
            {format!("Against v{}: {added} line(s) added, {removed} removed.", v - 1)}
        </p>
        <pre class="artifact-diff" tabindex="0" aria-label=format!("Changes from v{} to v{v}", v - 1)><code>{rows}</code></pre>
    }
    .into_any()
}

/// One version's preview in the sandbox.
#[component]
fn Preview(kind: ArtifactKind, title: String, source: String) -> impl IntoView {
    let frame = NodeRef::<html::Iframe>::new();
    let document: RwSignal<Option<Result<String, String>>> = RwSignal::new(None);
    let refused: RwSignal<Option<String>> = RwSignal::new(None);
    let served_by_worker = crate::pwa::controls_this_page();
    {
        let title = title.clone();
        spawn_local(async move {
            let made = document_for(kind, &title, &source).await;
            let _ = document.try_set(Some(made));
        });
    }
    let frame_title = format!("Preview of {title}");
    let listener = {
        let frame_title = frame_title.clone();
        window_event_listener(leptos::ev::message, move |e: web_sys::MessageEvent| {
            // Only the sandbox page itself, in an opaque origin, is heard;
            // the preview inside it is never.
            let Some(message) = from_sandbox_page(frame, &e) else {
                return;
            };
            match message.get("artifact").and_then(|v| v.as_str()) {
                Some("ready") => {
                    let Some(Ok(html)) = document.get_untracked() else {
                        return;
                    };
                    post_to(
                        frame,
                        &json!({"artifact": "show", "html": html, "title": frame_title}),
                    );
                }
                Some("refused") => {
                    let why = message
                        .get("message")
                        .and_then(|m| m.as_str())
                        .unwrap_or("the sandbox refused it");
                    refused.set(Some(why.chars().take(300).collect()));
                }
                _ => {}
            }
        })
    };
    on_cleanup(move || listener.remove());

    view! {
        {move || refused.get().map(|why| view! {
            <p class="inline-error" role="alert">{format!("The preview could not be shown: {why}")}</p>
        })}
        {move || match document.get() {
            None => view! { <p class="muted" role="status">"Preparing the preview…"</p> }.into_any(),
            Some(Err(e)) => view! { <p class="inline-error" role="alert">{format!("The preview could not be shown: {e}")}</p> }.into_any(),
            Some(Ok(_)) => view! {
                <iframe
                    node_ref=frame
                    class="artifact-frame"
                    sandbox=(!served_by_worker).then_some("allow-scripts")
                    referrerpolicy="no-referrer"
                    src=SANDBOX_PAGE
                    title=frame_title.clone()
                ></iframe>
            }.into_any(),
        }}
    }
}
