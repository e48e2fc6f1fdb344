//! The search backend panel of Settings: which backend `web_search` uses.

use hearth_core::api::session::{BackendSource, SearchBackendSetting, SearchBackendState};
use hearth_core::builtin::web::WebFailure;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::runtime::use_runtime;
use crate::shared::confirm::ConfirmDialog;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BackendChoice {
    Searxng,
    Brave,
}

/// Which search backend `web_search` uses, chosen here (kept by the proxy)
/// or taken from the config file.
#[component]
pub fn SearchBackendPanel() -> impl IntoView {
    let rt = use_runtime();
    let state: RwSignal<Option<Result<SearchBackendState, String>>> = RwSignal::new(None);
    let choice = RwSignal::new(BackendChoice::Searxng);
    let url = RwSignal::new(String::new());
    let key = RwSignal::new(String::new());
    let busy = RwSignal::new(false);
    let message: RwSignal<Option<(bool, String)>> = RwSignal::new(None);
    let confirming = RwSignal::new(false);

    let failure = |f: WebFailure| f.message("web_search");
    {
        let web = rt.web();
        spawn_local(async move {
            let got = web.client.search_backend().await.map_err(failure);
            if let Ok(s) = &got {
                if s.backend.as_deref() == Some("brave") {
                    choice.set(BackendChoice::Brave);
                } else if let Some(u) = &s.url {
                    url.set(u.clone());
                }
            }
            state.set(Some(got));
        });
    }
    let save = {
        let rt = rt.clone();
        move || {
            let setting = match choice.get_untracked() {
                BackendChoice::Searxng => SearchBackendSetting::Searxng {
                    url: url.get_untracked().trim().to_string(),
                },
                BackendChoice::Brave => SearchBackendSetting::Brave {
                    api_key: key.get_untracked().trim().to_string(),
                },
            };
            let empty = match &setting {
                SearchBackendSetting::Searxng { url } => url.is_empty(),
                SearchBackendSetting::Brave { api_key } => api_key.is_empty(),
            };
            if empty {
                message.set(Some((
                    false,
                    match choice.get_untracked() {
                        BackendChoice::Searxng => {
                            "Enter the address of your SearXNG, e.g. http://127.0.0.1:8888".into()
                        }
                        BackendChoice::Brave => "Enter your Brave Search API key.".into(),
                    },
                )));
                return;
            }
            let web = rt.web();
            busy.set(true);
            spawn_local(async move {
                match web.client.set_search_backend(&setting).await {
                    Ok(s) => {
                        key.set(String::new());
                        message.set(Some((
                            true,
                            "Saved. web_search uses it from now on.".into(),
                        )));
                        state.set(Some(Ok(s)));
                    }
                    Err(f) => message.set(Some((false, format!("Not saved: {}", failure(f))))),
                }
                busy.set(false);
            });
        }
    };
    let clear = {
        let rt = rt.clone();
        move || {
            let web = rt.web();
            confirming.set(false);
            spawn_local(async move {
                match web.client.clear_search_backend().await {
                    Ok(s) => {
                        message.set(Some((true, "Removed.".into())));
                        state.set(Some(Ok(s)));
                    }
                    Err(f) => message.set(Some((false, format!("Not removed: {}", failure(f))))),
                }
            });
        }
    };
    let chosen_here = move || {
        matches!(
            state.get(),
            Some(Ok(SearchBackendState {
                source: Some(BackendSource::Settings),
                ..
            }))
        )
    };
    let from_file = move || {
        matches!(
            state.get(),
            Some(Ok(SearchBackendState {
                source: Some(BackendSource::ConfigFile),
                ..
            }))
        )
    };
    let save_submit = save.clone();
    view! {
        <section class="panel search-backend" aria-labelledby="search-backend-title">
            <h2 id="search-backend-title">"Web search"</h2>
            <p class="muted">"web_search asks a search engine through Hearth's local proxy: a SearXNG instance with its JSON format on, or Brave Search with your API key. The key stays with the proxy on this machine and is never shown again."</p>
            <p class="backend-status" data-testid="search-backend-status" aria-live="polite"
                class:unset=move || !matches!(state.get(), Some(Ok(SearchBackendState { configured: true, .. })))>
                {move || match state.get() {
                    None => "Checking…".to_string(),
                    Some(Ok(s)) => s.summary(),
                    Some(Err(m)) => m,
                }}
            </p>
            <Show when=from_file>
                <p class="muted">"It is set in hearth's config file; a backend chosen here takes its place."</p>
            </Show>
            <form class="backend-form" on:submit=move |ev: leptos::ev::SubmitEvent| {
                ev.prevent_default();
                save_submit();
            }>
                <label class="field">
                    <span class="muted">"Backend"</span>
                    <select
                        aria-label="Search backend"
                        prop:value=move || match choice.get() { BackendChoice::Searxng => "searxng", BackendChoice::Brave => "brave" }
                        on:change=move |ev| {
                            choice.set(if event_target_value(&ev) == "brave" { BackendChoice::Brave } else { BackendChoice::Searxng });
                            message.set(None);
                        }
                    >
                        <option value="searxng">"SearXNG"</option>
                        <option value="brave">"Brave Search"</option>
                    </select>
                </label>
                {move || match choice.get() {
                    BackendChoice::Searxng => view! {
                        <label class="field grow">
                            <span class="muted">"SearXNG address"</span>
                            <input type="url" aria-label="SearXNG address" placeholder="https://searx.example.org"
                                prop:value=move || url.get()
                                on:input=move |ev| url.set(event_target_value(&ev))/>
                        </label>
                    }.into_any(),
                    BackendChoice::Brave => view! {
                        <label class="field grow">
                            <span class="muted">"Brave Search API key"</span>
                            <input type="password" autocomplete="off" aria-label="Brave Search API key"
                                placeholder=move || if matches!(state.get(), Some(Ok(SearchBackendState { api_key_set: true, .. }))) { "A key is set; enter a new one to replace it" } else { "Your subscription token" }
                                prop:value=move || key.get()
                                on:input=move |ev| key.set(event_target_value(&ev))/>
                        </label>
                    }.into_any(),
                }}
                <button type="submit" class="primary" disabled=move || busy.get()>"Use this backend"</button>
            </form>
            <p class="muted hint">
                "A SearXNG on this machine or your network must also be allowed when hearth starts, e.g. "
                <code>"hearth serve --allow-private-fetch 127.0.0.1:8888"</code>"."
            </p>
            <div class="backend-actions">
                <Show when=chosen_here>
                    <button class="danger-outline small" on:click=move |_| confirming.set(true)>"Remove this backend…"</button>
                </Show>
                {move || message.get().map(|(ok, m)| if ok {
                    view! { <span class="saved" role="status">{m}</span> }.into_any()
                } else {
                    view! { <span class="error" role="alert">{m}</span> }.into_any()
                })}
            </div>
            <Show when=move || confirming.get()>
                <ConfirmDialog
                    title="Remove the search backend?".to_string()
                    message="web_search stops working until you choose another (or the config file names one). A Brave key would have to be entered again.".to_string()
                    confirm_label="Remove".to_string()
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
